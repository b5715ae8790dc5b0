// Package deploy holds Crucible's deployment files — the Dockerfile's
// companions, deploy/compose.yaml for one host, deploy/k8s (a kustomize
// base, the dev and prod overlays, and the keda and prometheus components)
// — and the tests that validate them without a cluster: every rendered
// manifest decodes strictly into its typed Kubernetes object (or into the
// CRD mirrors of crd_test.go), the overlays render, the compose file
// parses into typed services, the Dockerfile's build stage compiles, and
// the NATS permissions of the Kubernetes configuration carry a campaign on
// a real server while refusing what each service must not do.
package deploy
