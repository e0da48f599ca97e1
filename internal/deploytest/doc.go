// Package deploytest holds the tests of svc's deployment files: the
// Dockerfile, the compose files and the Kubernetes manifests under deploy/
// (the nginx configuration is run for real by internal/e2e). They check the
// files offline, without a container engine or a cluster: compose files
// through the Compose Specification's own loader and schema, manifests
// decoded strictly into the Kubernetes API's Go types, the Dockerfile's
// instructions; and their cross-references, including that every setting
// they give svc is one svc reads. It has no non-test code besides this
// comment; nothing imports it.
package deploytest
