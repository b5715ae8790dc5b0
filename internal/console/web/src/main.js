// Crucible console: the campaigns with live progress, and a campaign's
// plots, discoveries with their structures, downloads and lifecycle
// buttons. Reads the JSON API and the server-sent events of "crucible serve".

const app = document.getElementById('app')
const live = document.getElementById('live')
const tokenInput = document.getElementById('token')
let info = { control: false }
let campaigns = new Map() // id -> Campaign from /api/campaigns and progress events
let view = null // { kind: 'list' } or { kind: 'campaign', id, data, selected }

const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]))
const pct = (n, of) => (of > 0 ? ((100 * n) / of).toFixed(1) + '%' : '—')
const num = (x, d = 3) => (x == null ? '—' : Number(x).toFixed(d))

async function api(path, opts = {}) {
  const res = await fetch(path, opts)
  const body = res.headers.get('Content-Type')?.includes('json') ? await res.json() : await res.text()
  if (!res.ok) throw new Error(body?.error || res.statusText)
  return body
}

// --- the campaigns list -------------------------------------------------

function progressCell(c) {
  const p = Math.round(100 * (c.progress || 0))
  return `<span class="bar"><i style="width:${p}%"></i></span> <span class="progress-text">${c.counters.evaluated}/${c.budget}</span>`
}

function campaignRow(c) {
  return `<tr class="clickable" data-campaign="${esc(c.campaign)}">
    <td><a href="#/c/${encodeURIComponent(c.campaign)}">${esc(c.campaign)}</a></td><td>${esc(c.task)}</td>
    <td><span class="state ${esc(c.state)}">${esc(c.state)}</span></td><td>${progressCell(c)}</td>
    <td class="num">${c.counters.hits}</td><td class="num">${c.counters.stable_hits}</td><td class="num discoveries">${c.counters.discoveries}</td></tr>`
}

function renderList() {
  const rows = [...campaigns.values()].map(campaignRow).join('')
  app.innerHTML = `<h1>Campaigns</h1>
    <p class="muted">Live from the installation's streams; a campaign's page has its plots, discoveries and structures.</p>
    <table id="campaigns"><thead><tr><th>campaign</th><th>task</th><th>state</th><th>progress</th><th>hits</th><th>stable hits</th><th>discoveries</th></tr></thead>
    <tbody>${rows || '<tr><td colspan="7" class="muted">No campaigns yet: submit one with "crucible submit".</td></tr>'}</tbody></table>`
  app.querySelectorAll('tr[data-campaign]').forEach((tr) => tr.addEventListener('click', (e) => {
    if (e.target.tagName !== 'A') location.hash = '#/c/' + encodeURIComponent(tr.dataset.campaign)
  }))
}

// --- a campaign ----------------------------------------------------------

function lifecycleButtons(c) {
  const dis = info.control ? '' : 'disabled title="read-only: start crucible serve with CRUCIBLE_CONSOLE_TOKEN"'
  return `<div class="actions" id="actions">
    <button id="btn-pause" data-verb="pause" ${dis}>Pause</button>
    <button id="btn-resume" data-verb="resume" ${dis}>Resume</button>
    <button id="btn-cancel" class="danger" data-verb="cancel" data-confirm="1" ${dis}>Cancel</button>
    <span><input id="extend-budget" type="number" min="1" value="${c ? c.budget * 2 : ''}" ${dis}> <button id="btn-extend" data-verb="extend" ${dis}>Extend budget</button></span>
    <button id="btn-delete" class="danger" data-verb="delete" data-confirm="1" ${dis}>Delete</button>
    <span id="action-result" class="result"></span></div>`
}

function statsHTML(d) {
  return `<div class="stats" id="stats">
    <div class="stat"><b class="progress-text">${d.evaluated}/${d.budget}</b>evaluated</div>
    <div class="stat"><b>${d.hits}</b>hits (${pct(d.hits, d.evaluated)})</div>
    <div class="stat"><b>${d.stable_hits}</b>stable hits (${pct(d.stable_hits, d.evaluated)})</div>
    <div class="stat"><b>${d.n_stable}</b>N_stable · AUDC ${num(d.audc)}</div>
    <div class="stat"><b id="n-discoveries">${d.discovered}</b>discoveries</div></div>`
}

function discoveryRows(d) {
  const cols = [...new Set(d.discoveries.flatMap((x) => x.constrained))]
  const head = `<tr><th>candidate</th><th>formula</th><th>E_hull (eV/atom)</th>${cols.map((c) => `<th>${esc(c)}</th>`).join('')}<th>novelty</th></tr>`
  const prop = (x, name) => {
    const p = x.properties[name]
    if (!p) return '—'
    return `${Number(p.value).toPrecision(3)}${p.uncertainty ? ' ± ' + Number(p.uncertainty).toPrecision(2) : ''} ${esc(p.unit)}`
  }
  const rows = d.discoveries.map((x) => `<tr class="clickable discovery" data-id="${esc(x.id)}">
    <td>${esc(x.id)}</td><td>${esc(x.formula)}</td>
    <td class="num">${x.e_above_hull == null ? '—' : (x.e_above_hull >= 0 ? '+' : '') + num(x.e_above_hull)}${x.e_above_hull_error != null ? ' ± ' + Number(x.e_above_hull_error).toPrecision(2) : ''}</td>
    ${cols.map((c) => `<td class="num">${prop(x, c)}</td>`).join('')}<td>${esc(x.novelty || '')}</td></tr>`).join('')
  return `<table id="discoveries"><thead>${head}</thead><tbody>${rows || `<tr><td colspan="${4 + cols.length}" class="muted">No discoveries yet.</td></tr>`}</tbody></table>`
}

function renderCampaign() {
  const d = view.data
  const id = view.id
  const c = campaigns.get(id)
  const base = `/api/campaigns/${encodeURIComponent(id)}`
  app.innerHTML = `<h1>${esc(id)} <span class="state ${esc(d.state)}" id="state">${esc(d.state)}</span></h1>
    <p class="muted">${esc(d.task)} · <a href="#/">all campaigns</a></p>
    ${lifecycleButtons(c)}
    ${statsHTML(d)}
    <div class="plots">
      <div class="card" data-plot="curve"></div><div class="card" data-plot="rates"></div><div class="card" data-plot="pareto"></div>
    </div>
    <h2>Discoveries</h2>
    <p class="downloads">Download: <a href="${base}/download?format=csv">evaluations CSV</a>
      <a href="${base}/download?format=cif">discoveries CIF</a><a href="${base}/download?format=cif&symmetrize=1">CIF (standard setting)</a><a href="${base}/download?format=json">pymatgen JSON</a>
      <a href="${base}/download?format=xyz">extended XYZ</a></p>
    <div class="split"><div id="discoveries-box">${discoveryRows(d)}</div>
      <div id="structure-view" class="card"><p class="muted">Select a discovery to see its structure.</p></div></div>`
  loadPlots()
  bindDiscoveries()
  app.querySelectorAll('#actions button').forEach((b) => b.addEventListener('click', () => act(b)))
  if (view.selected) showStructure(view.selected)
}

async function loadPlots() {
  if (view?.kind !== 'campaign') return
  const base = `/api/campaigns/${encodeURIComponent(view.id)}/plots/`
  for (const el of app.querySelectorAll('[data-plot]')) {
    try {
      el.innerHTML = await api(base + el.dataset.plot + '.svg')
    } catch (e) {
      el.innerHTML = `<p class="result error">${esc(e.message)}</p>`
    }
  }
}

function bindDiscoveries() {
  app.querySelectorAll('tr.discovery').forEach((tr) => tr.addEventListener('click', () => showStructure(tr.dataset.id)))
}

let viewer = null
async function showStructure(cand) {
  view.selected = cand
  app.querySelectorAll('tr.discovery').forEach((tr) => tr.classList.toggle('selected', tr.dataset.id === cand))
  const x = view.data.discoveries.find((y) => y.id === cand)
  const box = document.getElementById('structure-view')
  if (!x || !box) return
  const url = `/api/campaigns/${encodeURIComponent(view.id)}/structures/${encodeURIComponent(cand)}`
  const checks = (x.checks || []).map((c) => `<span class="${c.passed ? 'pass' : 'fail'}" title="${esc(c.detail)}">${c.passed ? '✓' : '✗'} ${esc(c.name)}</span>`).join('')
  box.innerHTML = `<h2 style="margin-top:0">${esc(x.formula)} <span class="muted">${esc(cand)}</span></h2>
    <div class="viewer" id="viewer" data-candidate="${esc(cand)}"></div>
    <p class="downloads">${['cif', 'poscar', 'json', 'xyz'].map((f) => `<a href="${url}?format=${f}">${f.toUpperCase()}</a>`).join('')}</p>
    <div class="checks">${checks}</div><pre id="verdict-report">${esc(x.report)}</pre>`
  try {
    const cif = await api(url + '?format=cif&inline=1')
    const $3Dmol = await import('3dmol')
    const el = document.getElementById('viewer')
    if (!el || el.dataset.candidate !== cand) return
    viewer = $3Dmol.createViewer(el, { backgroundColor: 'white' })
    const m = viewer.addModel(cif, 'cif', { doAssembly: true, duplicateAssemblyAtoms: true, normalizeAssembly: true })
    viewer.setStyle({}, { sphere: { scale: 0.35, colorscheme: 'Jmol' }, stick: { radius: 0.12, colorscheme: 'Jmol' } })
    viewer.addUnitCell(m, { box: { color: 'black' } })
    viewer.resize()
    viewer.zoomTo()
    viewer.zoom(0.8)
    viewer.render()
    el.dataset.loaded = '1'
  } catch (e) {
    const el = document.getElementById('viewer')
    if (el) el.innerHTML = `<p class="result error">structure view: ${esc(e.message)}</p>`
  }
}

async function act(button) {
  const verb = button.dataset.verb
  const out = document.getElementById('action-result')
  if (button.dataset.confirm && !button.classList.contains('confirm')) {
    button.classList.add('confirm')
    button.textContent = 'Confirm ' + verb
    out.className = 'result'
    out.textContent = `Click again to ${verb} ${view.id}.`
    return
  }
  button.classList.remove('confirm')
  button.textContent = verb[0].toUpperCase() + verb.slice(1)
  const opts = { method: 'POST', headers: { Authorization: 'Bearer ' + tokenInput.value } }
  if (verb === 'extend') {
    opts.headers['Content-Type'] = 'application/json'
    opts.body = JSON.stringify({ budget: Number(document.getElementById('extend-budget').value) })
  }
  try {
    await api(`/api/campaigns/${encodeURIComponent(view.id)}/${verb}`, opts)
    out.className = 'result ok'
    out.textContent = `${verb}: done`
    if (verb === 'delete') { campaigns.delete(view.id); location.hash = '#/' ; return }
    refreshCampaign()
  } catch (e) {
    out.className = 'result error'
    out.textContent = `${verb}: ${e.message}`
  }
}

let refreshing = null
function refreshCampaign() {
  if (refreshing) return
  refreshing = setTimeout(async () => {
    refreshing = null
    if (view?.kind !== 'campaign') return
    try {
      const d = await api(`/api/campaigns/${encodeURIComponent(view.id)}`)
      if (view?.kind !== 'campaign' || d.campaign !== view.id) return
      const grew = d.discovered !== view.data.discovered
      view.data = d
      document.getElementById('stats').outerHTML = statsHTML(d)
      const st = document.getElementById('state')
      st.textContent = d.state
      st.className = 'state ' + d.state
      if (grew) {
        document.getElementById('discoveries-box').innerHTML = discoveryRows(d)
        bindDiscoveries()
        if (view.selected) app.querySelectorAll('tr.discovery').forEach((tr) => tr.classList.toggle('selected', tr.dataset.id === view.selected))
      }
      loadPlots()
    } catch (e) { /* the next event retries */ }
  }, 1000)
}

// --- routing and live events --------------------------------------------

async function route() {
  const m = location.hash.match(/^#\/c\/(.+)$/)
  if (m) {
    const id = decodeURIComponent(m[1])
    try {
      const data = await api(`/api/campaigns/${encodeURIComponent(id)}`)
      view = { kind: 'campaign', id, data }
      renderCampaign()
    } catch (e) {
      view = null
      app.innerHTML = `<p class="result error">${esc(e.message)}</p><p><a href="#/">all campaigns</a></p>`
    }
    return
  }
  view = { kind: 'list' }
  try {
    for (const c of await api('/api/campaigns')) campaigns.set(c.campaign, c)
  } catch (e) { app.innerHTML = `<p class="result error">${esc(e.message)}</p>` ; return }
  renderList()
}

function connect() {
  const es = new EventSource('/api/events')
  es.onopen = () => { live.textContent = '● live'; live.className = 'live on' }
  es.onerror = () => { live.textContent = '● reconnecting'; live.className = 'live off' }
  es.addEventListener('progress', (e) => {
    const c = JSON.parse(e.data)
    campaigns.set(c.campaign, c)
    if (view?.kind === 'list') {
      const tr = app.querySelector(`tr[data-campaign="${CSS.escape(c.campaign)}"]`)
      if (tr) tr.outerHTML = campaignRow(c)
      else renderList()
      app.querySelectorAll('tr[data-campaign]').forEach((tr) => tr.onclick = (ev) => {
        if (ev.target.tagName !== 'A') location.hash = '#/c/' + encodeURIComponent(tr.dataset.campaign)
      })
    } else if (view?.kind === 'campaign' && view.id === c.campaign) {
      refreshCampaign()
    }
  })
  es.addEventListener('discovery', (e) => {
    const d = JSON.parse(e.data)
    if (view?.kind === 'campaign' && view.id === d.campaign) refreshCampaign()
  })
  es.addEventListener('status', (e) => {
    const s = JSON.parse(e.data)
    if (view?.kind === 'campaign' && view.id === s.campaign) refreshCampaign()
  })
}

async function start() {
  try { info = await api('/api/info') } catch (e) { /* read-only */ }
  if (info.control) {
    document.getElementById('token-box').hidden = false
    tokenInput.value = localStorage.getItem('crucible-token') || ''
    tokenInput.addEventListener('change', () => localStorage.setItem('crucible-token', tokenInput.value))
  }
  window.addEventListener('hashchange', route)
  await route()
  connect()
}

start()
