package deploytest

import (
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// dataDir is SVC_DATA_DIR in a container of the image: env's, else the
// Dockerfile's ENV.
func dataDir(t *testing.T, env map[string]string) string {
	t.Helper()
	if d := env["SVC_DATA_DIR"]; d != "" {
		return d
	}
	for _, e := range find(readDockerfile(t), "ENV") {
		if d, ok := strings.CutPrefix(e, "SVC_DATA_DIR="); ok {
			return d
		}
	}
	t.Fatal("the Dockerfile sets no SVC_DATA_DIR")
	return ""
}

// TestKubernetesDataDir: every pod's data dir is a volume (the root
// filesystem is read-only, and a container's own files do not survive its
// restart). The proxy's holds the audit spool, where each entry is written
// before its answer ends: on disk, not in memory (a tmpfs counts against
// the memory limit), and, for an emptyDir, with room for twice the spool's
// bound (SVC_LOG_SPILL_MAX_BYTES: a restarted container copies its
// predecessor's spool into its own), else the kubelet evicts the pod and
// its entries with it.
func TestKubernetesDataDir(t *testing.T) {
	m := loadManifests(t)
	for name, d := range m.deployments {
		t.Run(name, func(t *testing.T) {
			env := podEnv(t, m, d)
			dir := dataDir(t, env)
			spec := d.Spec.Template.Spec
			var vol *corev1.Volume
			for _, mount := range spec.Containers[0].VolumeMounts {
				if mount.MountPath != dir {
					continue
				}
				for i := range spec.Volumes {
					if spec.Volumes[i].Name == mount.Name {
						vol = &spec.Volumes[i]
					}
				}
			}
			if vol == nil {
				t.Fatalf("no volume is mounted on the data dir %s", dir)
			}
			if componentOf(d) != "proxy" {
				return
			}
			spill := loadConfig(t, withRealSecrets(env)).LogSpillMaxBytes
			switch {
			case vol.PersistentVolumeClaim != nil, vol.Ephemeral != nil:
			case vol.EmptyDir != nil:
				if vol.EmptyDir.Medium != corev1.StorageMediumDefault {
					t.Errorf("the data dir's emptyDir has medium %q: want the node's disk (the spool may hold %d bytes)", vol.EmptyDir.Medium, spill)
				}
				if limit := vol.EmptyDir.SizeLimit; limit == nil || limit.Value() < 2*spill {
					t.Errorf("the data dir's emptyDir sizeLimit is %v: want at least twice SVC_LOG_SPILL_MAX_BYTES (%d)", limit, spill)
				}
			default:
				t.Errorf("the data dir is volume %+v: want an emptyDir (survives the container's restarts) or a claim", vol.VolumeSource)
			}
		})
	}
}

// credential matches the settings that are secrets: svc's keys, the stores'
// addresses (they carry passwords), provider keys, alert webhook URLs
// (anyone holding one can post to the channel), the audit chain's key.
var credential = regexp.MustCompile(`^(ADMIN_API_KEY|SVC_MASTER_KEY|SVC_AUDIT_CHAIN_KEY|DATABASE_URL|KEYSTORE_REDIS_URL|REDIS_URL)$|_API_KEY$|_WEBHOOK_URL$`)

// TestKubernetesCredentialsInSecret: no ConfigMap and no literal env of a
// Deployment holds a credential, and the Secret template has a place for
// each of the alert webhooks and the audit chain's key.
func TestKubernetesCredentialsInSecret(t *testing.T) {
	m := loadManifests(t)
	for name, cm := range m.configMaps {
		for k := range cm.Data {
			if credential.MatchString(k) {
				t.Errorf("ConfigMap %s holds %s, a credential: put it in the Secret", name, k)
			}
		}
	}
	for name, d := range m.deployments {
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if credential.MatchString(e.Name) && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
				t.Errorf("Deployment %s sets %s, a credential, in its manifest: take it from the Secret", name, e.Name)
			}
		}
	}
	if len(m.secrets) == 0 {
		t.Fatal("no Secret")
	}
	for name, s := range m.secrets {
		for _, want := range []string{"SVC_SLACK_WEBHOOK_URL", "SVC_TEAMS_WEBHOOK_URL", "SVC_DISCORD_WEBHOOK_URL", "SVC_AUDIT_CHAIN_KEY"} {
			if _, ok := s.StringData[want]; !ok {
				t.Errorf("Secret %s has no %s: the template must show where it goes", name, want)
			}
		}
	}
}

// TestCredentialPattern: the pattern the tests above rely on.
func TestCredentialPattern(t *testing.T) {
	for name, want := range map[string]bool{
		"ADMIN_API_KEY": true, "OPENAI_API_KEY": true, "SVC_SLACK_WEBHOOK_URL": true, "SVC_AUDIT_CHAIN_KEY": true, "DATABASE_URL": true,
		"SVC_LOG_LEVEL": false, "SVC_ALERTS_ENABLED": false, "OPENAI_API_BASE": false, "SVC_LOG_SPILL_MAX_BYTES": false,
	} {
		if got := credential.MatchString(name); got != want {
			t.Errorf("credential(%s) = %v, want %v", name, got, want)
		}
	}
}
