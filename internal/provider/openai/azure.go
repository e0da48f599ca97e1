package openai

import (
	"net/url"
	"strings"

	"github.com/svc-gateway/svc/internal/provider"
)

// AzureAPIVersion is the api-version Azure OpenAI is called with when the
// deployment names none (AZURE_API_VERSION): the latest GA version of the data
// plane inference API.
const AzureAPIVersion = "2024-10-21"

// NewAzure returns the adapter for Azure OpenAI, whose wire format is
// OpenAI's but whose URLs name a deployment and an API version:
//
//	POST {base}/openai/deployments/{deployment}/chat/completions?api-version={v}
//	GET  {base}/openai/models?api-version={v}
//
// The base is the resource's endpoint (AZURE_API_BASE, e.g.
// https://{resource}.openai.azure.com); the deployment is the deployment's model,
// so a model name is a deployment name; v is the deployment's APIVersion, else
// AzureAPIVersion. The caller's "model" stays in the body as it was (Azure
// ignores it). The key goes in the api-key header, which upstream/cred sets
// (cred.Header{Name: "api-key"}). Errors have OpenAI's shape and the same
// mapping. The model list is the resource's models, not its deployments.
func NewAzure() *Adapter { return &Adapter{url: azureURL, keepModel: true} }

func azureURL(t provider.Deployment, op string) string {
	v := t.APIVersion
	if v == "" {
		v = AzureAPIVersion
	}
	base := strings.TrimRight(t.BaseURL, "/")
	q := "?api-version=" + url.QueryEscape(v)
	if op == "models" {
		return base + "/openai/models" + q
	}
	return base + "/openai/deployments/" + url.PathEscape(t.Model) + "/" + op + q
}
