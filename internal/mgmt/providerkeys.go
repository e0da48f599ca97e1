package mgmt

import (
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/store"
)

type providerKeyBody struct {
	Provider string `json:"provider"`
	APIKey   string `json:"api_key"`
}

// providerKeyView never carries the key, only its masked prefix.
type providerKeyView struct {
	Provider  string     `json:"provider"`
	MaskedKey string     `json:"masked_key"`
	Source    string     `json:"source"` // stored or env
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

func (a *API) putProviderKey(w http.ResponseWriter, r *http.Request) error {
	var body providerKeyBody
	if err := readJSON(r, &body); err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	rec, err := a.d.Vault.Put(ctx, body.Provider, body.APIKey)
	if errors.Is(err, keyvault.ErrNotPublished) {
		// Stored; other processes pick it up within the cache TTL.
		a.d.Log.Warn("provider key stored but the change notice was not published", "provider", rec.Provider)
		err = nil
	}
	if err != nil {
		return vaultError(err)
	}
	a.Record(r, evProviderKeyStore, rec.Provider, nil) // never the key, nor its masked form
	return writeJSON(w, http.StatusCreated, providerKeyView{Provider: rec.Provider, MaskedKey: rec.Masked, Source: "stored", UpdatedAt: &rec.UpdatedAt})
}

func (a *API) listProviderKeys(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	recs, err := a.d.Vault.List(ctx)
	if err != nil {
		return vaultError(err)
	}
	out := []providerKeyView{}
	stored := map[string]bool{}
	for _, rec := range recs {
		stored[rec.Provider] = true
		out = append(out, providerKeyView{Provider: rec.Provider, MaskedKey: rec.Masked, Source: "stored", UpdatedAt: &rec.UpdatedAt})
	}
	for name, masked := range a.d.EnvKeys {
		if !stored[name] {
			out = append(out, providerKeyView{Provider: name, MaskedKey: masked, Source: "env"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Provider < out[j].Provider })
	return writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": out})
}

func (a *API) deleteProviderKey(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	name := r.PathValue("provider")
	err := a.d.Vault.Delete(ctx, name)
	if errors.Is(err, keyvault.ErrNotPublished) {
		a.d.Log.Warn("provider key deleted but the change notice was not published", "provider", name)
		err = nil
	}
	if err != nil {
		return vaultError(err)
	}
	a.Record(r, evProviderKeyDelete, name, nil)
	return writeJSON(w, http.StatusOK, map[string]any{"provider": name, "deleted": true})
}

// vaultError maps keyvault's errors to API errors.
func vaultError(err error) error {
	var ve *keyvault.ValidationError
	switch {
	case errors.As(err, &ve):
		return apierr.BadParam(ve.Field, "%s", ve.Message)
	case errors.Is(err, store.ErrNotFound):
		return apierr.New(apierr.NotFound, "provider_key_not_found", "no stored key for that provider")
	}
	return apierr.Wrap(apierr.Internal, "store_error", "provider key store failed", err)
}
