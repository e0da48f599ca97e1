package deploytest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/svc-gateway/svc/internal/wire"
)

// k8sDir holds the Kubernetes manifests and their kustomization.
var k8sDir = filepath.Join(repoRoot, "deploy", "kubernetes")

// proxyPaths and managementPaths are the spec's path table as Ingress
// prefixes: the proxy's paths, and the management API's (with svc's own
// management routes the table does not show).
var (
	proxyPaths      = []string{"/v1", "/native", "/ide", "/a2a", "/api/mcp", "/.well-known"}
	managementPaths = []string{"/api/guardrails", "/api/guard", "/api/auth", "/api/enterprise", "/api/routing", "/api/admin/mcp", "/api/metacache",
		"/api/vas", "/api/providers", "/api/alerts", "/api/a2a", "/api/analytics", "/api/audit", "/api/health"}
	// toolGatewayPaths are management's in the spec's table; the tool
	// gateway serves them on the proxy (docs/decisions.md).
	toolGatewayPaths = []string{"/api/mcp/tools", "/api/mcp/auth"}
	// compliancePaths are the compliance API's: /v1/compliance wins over
	// the proxy's /v1 on the internal ingress (the longest prefix does).
	compliancePaths = []string{"/api/compliance", "/v1/compliance"}
	// policyPaths are the policy library's (svc.conf's locations).
	policyPaths = []string{"/api/policy", "/api/policies", "/api/presets", "/api/documents"}
	// bridgePaths are the bridge's own; /api/vas (which it serves too)
	// stays on management (docs/decisions.md).
	bridgePaths = []string{"/api/redis", "/api/hybrid"}
)

// minReplicas are the components that must run more than one pod: the
// compliance API, in the path of every scan, survives a pod's loss. (The
// proxy's count is its HorizontalPodAutoscaler's.)
var minReplicas = map[string]int32{"compliance": 2}

// manifests are the decoded objects, by name.
type manifests struct {
	kustomization kustomization
	deployments   map[string]*appsv1.Deployment
	services      map[string]*corev1.Service
	hpas          map[string]*autoscalingv2.HorizontalPodAutoscaler
	pdbs          map[string]*policyv1.PodDisruptionBudget
	ingresses     map[string]*networkingv1.Ingress
	secrets       map[string]*corev1.Secret
	configMaps    map[string]*corev1.ConfigMap
	namespaces    map[string]*corev1.Namespace
}

// kustomization is the part of kustomize's file that the manifests use;
// decoded strictly too, so a field it does not list fails.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels"`
	Resources []string `json:"resources"`
	Images    []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// docSeparator splits a YAML stream into its documents.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decodeStrict decodes one manifest into the Go type of its apiVersion and
// kind; an unknown field, a field of the wrong type, a duplicate field or
// an unknown kind is an error.
func decodeStrict(m *manifests, doc []byte) (string, error) {
	var meta struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return "", err
	}
	into := func(obj any, name func() string, add func()) (string, error) {
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return "", err
		}
		if name() == "" {
			return "", fmt.Errorf("%s without metadata.name", meta.Kind)
		}
		add()
		return meta.Kind + "/" + name(), nil
	}
	switch meta.APIVersion + " " + meta.Kind {
	case "apps/v1 Deployment":
		o := &appsv1.Deployment{}
		return into(o, o.GetName, func() { m.deployments[o.Name] = o })
	case "v1 Service":
		o := &corev1.Service{}
		return into(o, o.GetName, func() { m.services[o.Name] = o })
	case "autoscaling/v2 HorizontalPodAutoscaler":
		o := &autoscalingv2.HorizontalPodAutoscaler{}
		return into(o, o.GetName, func() { m.hpas[o.Name] = o })
	case "policy/v1 PodDisruptionBudget":
		o := &policyv1.PodDisruptionBudget{}
		return into(o, o.GetName, func() { m.pdbs[o.Name] = o })
	case "networking.k8s.io/v1 Ingress":
		o := &networkingv1.Ingress{}
		return into(o, o.GetName, func() { m.ingresses[o.Name] = o })
	case "v1 Secret":
		o := &corev1.Secret{}
		return into(o, o.GetName, func() { m.secrets[o.Name] = o })
	case "v1 ConfigMap":
		o := &corev1.ConfigMap{}
		return into(o, o.GetName, func() { m.configMaps[o.Name] = o })
	case "v1 Namespace":
		o := &corev1.Namespace{}
		return into(o, o.GetName, func() { m.namespaces[o.Name] = o })
	}
	return "", fmt.Errorf("apiVersion %q kind %q: not a kind these tests know (add it to decodeStrict)", meta.APIVersion, meta.Kind)
}

// loadManifests decodes the kustomization and every resource it lists,
// strictly, and checks that it lists every YAML file of the directory.
func loadManifests(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{
		deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{},
		hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{}, pdbs: map[string]*policyv1.PodDisruptionBudget{},
		ingresses: map[string]*networkingv1.Ingress{}, secrets: map[string]*corev1.Secret{},
		configMaps: map[string]*corev1.ConfigMap{}, namespaces: map[string]*corev1.Namespace{},
	}
	b, err := os.ReadFile(filepath.Join(k8sDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &m.kustomization); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !slices.Contains(m.kustomization.Resources, base) {
			t.Errorf("%s is not among kustomization.yaml's resources: `kubectl apply -k` would leave it out", base)
		}
	}
	seen := map[string]string{}
	for _, res := range m.kustomization.Resources {
		b, err := os.ReadFile(filepath.Join(k8sDir, res))
		if err != nil {
			t.Errorf("kustomization.yaml lists %s: %v", res, err)
			continue
		}
		for i, doc := range docSeparator.Split(string(b), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			id, err := decodeStrict(m, []byte(doc))
			if err != nil {
				t.Errorf("%s, document %d: %v", res, i+1, err)
				continue
			}
			if other, dup := seen[id]; dup {
				t.Errorf("%s is defined in %s and in %s", id, other, res)
			}
			seen[id] = res
		}
	}
	if len(m.deployments) == 0 || len(m.services) == 0 || len(m.ingresses) == 0 {
		t.Fatalf("decoded %d deployments, %d services, %d ingresses from %s: want some of each", len(m.deployments), len(m.services), len(m.ingresses), k8sDir)
	}
	return m
}

func stripComments(doc string) string {
	var out []string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// TestKubernetesManifestsDecodeStrictly: every manifest is a valid object of
// the Kubernetes API: no unknown or misspelt field, no wrong type.
func TestKubernetesManifestsDecodeStrictly(t *testing.T) {
	loadManifests(t)

	t.Run("a misspelt field is refused", func(t *testing.T) {
		m := &manifests{deployments: map[string]*appsv1.Deployment{}}
		doc := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replica: 2\n"
		if _, err := decodeStrict(m, []byte(doc)); err == nil || !strings.Contains(err.Error(), "replica") {
			t.Errorf("spec.replica: got %v, want an unknown-field error", err)
		}
		doc = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: two\n"
		if _, err := decodeStrict(m, []byte(doc)); err == nil {
			t.Error("spec.replicas: two: got no error, want a type error")
		}
	})
}

// componentOf is the SERVICE_TYPE a Deployment's first container runs.
func componentOf(d *appsv1.Deployment) string {
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "SERVICE_TYPE" {
			return e.Value
		}
	}
	return ""
}

// matches reports whether selector selects labels.
func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestKubernetesDeployments: each Deployment runs a built component on its
// port, with readiness on /ready, liveness on /health, settings svc knows,
// and a grace period that covers svc's drain.
func TestKubernetesDeployments(t *testing.T) {
	m := loadManifests(t)
	components := map[string]int{}
	for name, d := range m.deployments {
		t.Run(name, func(t *testing.T) {
			spec := d.Spec.Template.Spec
			if d.Spec.Selector == nil || !matches(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
				t.Errorf("selector %v does not select the pod template's labels %v", d.Spec.Selector, d.Spec.Template.Labels)
			}
			if len(spec.Containers) != 1 {
				t.Fatalf("%d containers, want 1", len(spec.Containers))
			}
			c := spec.Containers[0]
			component := componentOf(d)
			port, built := componentPort(component)
			if !built {
				t.Fatalf("SERVICE_TYPE %q is not a component this build provides", component)
			}
			components[component]++
			if r := d.Spec.Replicas; r != nil && *r < 1 {
				t.Errorf("replicas %d: %s never runs", *r, component)
			}
			if want, ok := minReplicas[component]; ok {
				// Unset is Kubernetes's default, one.
				got := int32(1)
				if d.Spec.Replicas != nil {
					got = *d.Spec.Replicas
				}
				if got < want {
					t.Errorf("replicas %d, want at least %d for %s", got, want, component)
				}
				if u := d.Spec.Strategy.RollingUpdate; d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || u == nil || u.MaxUnavailable == nil || u.MaxUnavailable.IntValue() != 0 {
					t.Errorf("strategy %+v, want a rolling update with maxUnavailable 0, so a rollout keeps %d pods serving", d.Spec.Strategy, want)
				}
			}
			if len(c.Ports) != 1 || c.Ports[0].Name != "http" || int(c.Ports[0].ContainerPort) != port {
				t.Errorf("ports %+v, want one named http on %d (%s's port)", c.Ports, port, component)
			}
			for probe, want := range map[*corev1.Probe]string{c.ReadinessProbe: "/ready", c.LivenessProbe: "/health"} {
				if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || probe.HTTPGet.Port.String() != "http" {
					t.Errorf("probe %+v, want GET %s on port http", probe, want)
				}
			}
			if c.Image != m.kustomization.Images[0].Name {
				t.Errorf("image %q, want %q, the name kustomization.yaml sets", c.Image, m.kustomization.Images[0].Name)
			}
			if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
				t.Error("the pod may run as root: want runAsNonRoot")
			}
			env := podEnv(t, m, d)
			checkSettings(t, env)
			checkGrace(t, d, env)
		})
	}
	for _, c := range wire.Components() {
		// The bridge too: proxies write the audit log only to Redis, so
		// without a bridge it never reaches PostgreSQL.
		if components[c] != 1 {
			t.Errorf("deployments per component: %v, want one for each built component %v", components, wire.Components())
			break
		}
	}
}

// podEnv is the environment of d's container: its ConfigMaps' and Secrets'
// entries (envFrom), then its own env (a Secret's key as "from-secret").
func podEnv(t *testing.T, m *manifests, d *appsv1.Deployment) map[string]string {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			cm, ok := m.configMaps[from.ConfigMapRef.Name]
			if !ok {
				t.Errorf("envFrom names ConfigMap %q, which the manifests do not define", from.ConfigMapRef.Name)
				continue
			}
			for k, v := range cm.Data {
				env[k] = v
			}
		case from.SecretRef != nil:
			s, ok := m.secrets[from.SecretRef.Name]
			if !ok {
				t.Errorf("envFrom names Secret %q, which the manifests do not define", from.SecretRef.Name)
				continue
			}
			for k, v := range s.StringData {
				env[k] = v
			}
		}
	}
	for _, e := range c.Env {
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			s, ok := m.secrets[ref.SecretKeyRef.Name]
			if _, has := s.StringData[ref.SecretKeyRef.Key]; !ok || !has {
				t.Errorf("env %s takes key %q of Secret %q, which does not exist", e.Name, ref.SecretKeyRef.Key, ref.SecretKeyRef.Name)
			}
			env[e.Name] = "from-secret"
			continue
		}
		env[e.Name] = e.Value
	}
	return env
}

// withRealSecrets is env with real values in place of the Secret
// template's placeholders that svc refuses.
func withRealSecrets(env map[string]string) map[string]string {
	real := maps.Clone(env)
	real["ADMIN_API_KEY"] = "a-real-admin-key-0123456789"
	real["SVC_MASTER_KEY"] = strings.Repeat("ab", 32)
	return real
}

// checkSettings: the settings a pod gets are all svc's, svc refuses the
// Secret template's placeholders, and with real values in their place the
// settings load with no problem at all.
func checkSettings(t *testing.T, env map[string]string) {
	t.Helper()
	if bad := unknownNames(loadSettings(t, env)); len(bad) > 0 {
		t.Errorf("settings svc does not know: %s", strings.Join(bad, "; "))
	}
	if problems := loadSettings(t, env); !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, "ADMIN_API_KEY:") }) {
		t.Errorf("svc would start on the Secret template's placeholder ADMIN_API_KEY (problems: %q): the template must not run as it is", problems)
	}
	if problems := loadSettings(t, withRealSecrets(env)); len(problems) > 0 {
		t.Errorf("with real secrets, the settings still do not load: %q", problems)
	}
}

// checkGrace: the pod's grace period covers the preStop pause and svc's
// drain time (SVC_SHUTDOWN_TIMEOUT), so streams are not killed mid-drain.
func checkGrace(t *testing.T, d *appsv1.Deployment, env map[string]string) {
	t.Helper()
	drain, err := time.ParseDuration(env["SVC_SHUTDOWN_TIMEOUT"])
	if err != nil {
		t.Errorf("SVC_SHUTDOWN_TIMEOUT %q: %v (set it next to the grace period)", env["SVC_SHUTDOWN_TIMEOUT"], err)
		return
	}
	var pause time.Duration
	if l := d.Spec.Template.Spec.Containers[0].Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Exec != nil {
		if cmd := l.PreStop.Exec.Command; len(cmd) == 2 && cmd[0] == "sleep" {
			n, _ := strconv.Atoi(cmd[1])
			pause = time.Duration(n) * time.Second
		}
	}
	var grace time.Duration
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	if grace <= pause+drain {
		t.Errorf("terminationGracePeriodSeconds %v does not exceed the preStop pause (%v) plus SVC_SHUTDOWN_TIMEOUT (%v)", grace, pause, drain)
	}
}

// TestKubernetesCrossReferences: Services select a Deployment and name its
// port; the HorizontalPodAutoscaler and the PodDisruptionBudget are the
// proxy's; the Secret holds what a split deployment needs.
func TestKubernetesCrossReferences(t *testing.T) {
	m := loadManifests(t)
	byComponent := map[string]*appsv1.Deployment{}
	for _, d := range m.deployments {
		byComponent[componentOf(d)] = d
	}
	for name, s := range m.services {
		var selected []string
		for dn, d := range m.deployments {
			if matches(s.Spec.Selector, d.Spec.Template.Labels) {
				selected = append(selected, dn)
			}
		}
		if len(selected) != 1 {
			t.Errorf("Service %s selects deployments %v, want exactly one", name, selected)
			continue
		}
		ports := m.deployments[selected[0]].Spec.Template.Spec.Containers[0].Ports
		for _, p := range s.Spec.Ports {
			if !slices.ContainsFunc(ports, func(cp corev1.ContainerPort) bool { return cp.Name == p.TargetPort.String() }) {
				t.Errorf("Service %s port %s targets %q, which %s's container does not name", name, p.Name, p.TargetPort.String(), selected[0])
			}
		}
	}
	proxy := byComponent["proxy"]
	if proxy == nil {
		t.Fatal("no Deployment runs the proxy")
	}
	if len(m.hpas) != 1 {
		t.Fatalf("%d HorizontalPodAutoscalers, want 1 (the proxy's)", len(m.hpas))
	}
	for name, h := range m.hpas {
		ref := h.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || ref.Name != proxy.Name {
			t.Errorf("HorizontalPodAutoscaler %s scales %s %s, want the proxy's Deployment %s", name, ref.Kind, ref.Name, proxy.Name)
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 {
			t.Errorf("HorizontalPodAutoscaler %s: minReplicas %v, want at least 2", name, h.Spec.MinReplicas)
		}
		for _, p := range m.pdbs {
			if p.Spec.MinAvailable != nil && h.Spec.MinReplicas != nil && p.Spec.MinAvailable.IntValue() >= int(*h.Spec.MinReplicas) {
				t.Errorf("PodDisruptionBudget %s: minAvailable %s at the HPA's minReplicas %d would block every node drain", p.Name, p.Spec.MinAvailable.String(), *h.Spec.MinReplicas)
			}
		}
	}
	if len(m.pdbs) == 0 {
		t.Error("no PodDisruptionBudget")
	}
	for name, p := range m.pdbs {
		if p.Spec.Selector == nil || !matches(p.Spec.Selector.MatchLabels, proxy.Spec.Template.Labels) {
			t.Errorf("PodDisruptionBudget %s does not select the proxy's pods", name)
		}
	}
	for _, d := range m.deployments {
		for _, from := range d.Spec.Template.Spec.Containers[0].EnvFrom {
			if from.SecretRef == nil {
				continue
			}
			var keys []string
			for k := range m.secrets[from.SecretRef.Name].StringData {
				keys = append(keys, k)
			}
			for _, want := range []string{"ADMIN_API_KEY", "SVC_MASTER_KEY", "DATABASE_URL", "KEYSTORE_REDIS_URL"} {
				if !slices.Contains(keys, want) {
					t.Errorf("Secret %s has keys %v, want %s", from.SecretRef.Name, keys, want)
				}
			}
		}
	}
}

// TestKubernetesIngresses: the public ingress carries the proxy's paths
// and nothing else; the management, compliance and bridge paths are on an ingress of another
// class (spec rule 3); both are SSE-safe (rule 9); every backend exists.
func TestKubernetesIngresses(t *testing.T) {
	m := loadManifests(t)
	public, internal := m.ingresses["svc-public"], m.ingresses["svc-internal"]
	if public == nil || internal == nil {
		t.Fatalf("ingresses %v, want svc-public and svc-internal", slices.Sorted(maps.Keys(m.ingresses)))
	}
	class := func(ing *networkingv1.Ingress) string {
		if ing.Spec.IngressClassName == nil {
			return ""
		}
		return *ing.Spec.IngressClassName
	}
	if class(public) == "" || class(public) == class(internal) {
		t.Errorf("ingress classes public %q, internal %q: want two different classes, so the management paths are not on the public one", class(public), class(internal))
	}
	routes := func(ing *networkingv1.Ingress) map[string]string {
		out := map[string]string{}
		for _, rule := range ing.Spec.Rules {
			for _, p := range rule.HTTP.Paths {
				svc := p.Backend.Service
				if svc == nil {
					t.Errorf("%s %s: no service backend", ing.Name, p.Path)
					continue
				}
				s, ok := m.services[svc.Name]
				if !ok || !slices.ContainsFunc(s.Spec.Ports, func(sp corev1.ServicePort) bool { return sp.Name == svc.Port.Name && svc.Port.Name != "" }) {
					t.Errorf("%s %s: backend %s port %q is not a Service port", ing.Name, p.Path, svc.Name, svc.Port.Name)
				}
				if p.PathType == nil || *p.PathType != networkingv1.PathTypePrefix {
					t.Errorf("%s %s: pathType %v, want Prefix (the spec's patterns match the bare path too)", ing.Name, p.Path, p.PathType)
				}
				out[p.Path] = svc.Name
			}
		}
		return out
	}
	want := map[string]string{}
	for _, p := range proxyPaths {
		want[p] = "svc-proxy"
	}
	if got := routes(public); !maps.Equal(got, want) {
		t.Errorf("public ingress routes %v, want the proxy's paths alone: %v", got, want)
	}
	for _, p := range managementPaths {
		want[p] = "svc-management"
	}
	for _, p := range toolGatewayPaths {
		want[p] = "svc-proxy"
	}
	for _, p := range compliancePaths {
		want[p] = "svc-compliance"
	}
	for _, p := range policyPaths {
		want[p] = "svc-policy"
	}
	for _, p := range bridgePaths {
		want[p] = "svc-bridge"
	}
	if got := routes(internal); !maps.Equal(got, want) {
		t.Errorf("internal ingress routes %v, want %v", got, want)
	}
	// Each Service the ingresses name runs the component whose paths it gets.
	for svc, component := range map[string]string{"svc-proxy": "proxy", "svc-proxy-mcp": "proxy", "svc-management": "api-server", "svc-compliance": "compliance", "svc-bridge": "bridge"} {
		s, ok := m.services[svc]
		if !ok {
			continue // reported above as a missing backend
		}
		var runs []string
		for _, d := range m.deployments {
			if matches(s.Spec.Selector, d.Spec.Template.Labels) {
				runs = append(runs, componentOf(d))
			}
		}
		if len(runs) != 1 || runs[0] != component {
			t.Errorf("Service %s selects pods running %v, want %s's", svc, runs, component)
		}
	}
	checkMCPIngress(t, m, class(public))
	for _, ing := range []*networkingv1.Ingress{public, internal, m.ingresses["svc-mcp"]} {
		if ing == nil {
			continue
		}
		for k, v := range map[string]string{
			"nginx.ingress.kubernetes.io/proxy-buffering":         "off",
			"nginx.ingress.kubernetes.io/proxy-request-buffering": "off",
			"nginx.ingress.kubernetes.io/proxy-body-size":         "50m",
			"nginx.ingress.kubernetes.io/proxy-read-timeout":      "300",
			"nginx.ingress.kubernetes.io/proxy-send-timeout":      "300",
		} {
			if got := ing.Annotations[k]; got != v {
				t.Errorf("%s: annotation %s = %q, want %q", ing.Name, k, got, v)
			}
		}
	}
}

// checkMCPIngress: the tool gateway's MCP endpoints are on the public
// class, to the proxy, sticky per caller (a session lives in one pod), with
// a regular expression that admits server ids and nothing under /api.
func checkMCPIngress(t *testing.T, m *manifests, publicClass string) {
	t.Helper()
	ing := m.ingresses["svc-mcp"]
	if ing == nil {
		t.Fatal("no svc-mcp ingress: the tool gateway's /mcp/ and /{server_id}/mcp endpoints are not routed")
	}
	if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != publicClass {
		t.Errorf("svc-mcp: class %v, want the public one %q", ing.Spec.IngressClassName, publicClass)
	}
	if got := ing.Annotations["nginx.ingress.kubernetes.io/upstream-hash-by"]; !strings.Contains(got, "$http_authorization") {
		t.Errorf("svc-mcp: upstream-hash-by %q, want a hash on the caller's credential (MCP sessions live in one pod)", got)
	}
	var re *regexp.Regexp
	for _, rule := range ing.Spec.Rules {
		for _, p := range rule.HTTP.Paths {
			// Its own Service: ingress-nginx hashes per upstream (Service), and
			// the public routes to svc-proxy must not become sticky.
			if p.Backend.Service == nil || p.Backend.Service.Name != "svc-proxy-mcp" {
				t.Errorf("svc-mcp %s: backend %v, want svc-proxy-mcp", p.Path, p.Backend.Service)
			}
			if strings.ContainsAny(p.Path, "[$") {
				re = regexp.MustCompile("^" + p.Path)
			}
		}
	}
	if re == nil {
		t.Fatal("svc-mcp: no regular expression for /{server_id}/mcp")
	}
	for path, want := range map[string]bool{"/crm/mcp": true, "/crm/mcp/": true, "/a.b-c_d/mcp/": true,
		"/crm/mcp/x": false, "/v1/chat/completions": false, "/x/y/mcp": false} {
		if re.MatchString(path) != want {
			t.Errorf("svc-mcp's expression on %s: %v, want %v", path, !want, want)
		}
	}
}
