import { defineConfig } from 'vite'

// The console is served by "crucible serve" from the embedded ../dist.
export default defineConfig({
  base: './',
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
  },
})
