package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/openapi"
)

// api is an openapi entry in force and its connector once the toolkit
// made it.
type api struct {
	cfg   OpenAPI
	users map[string]*openapi.UserAuthorization // of the per_user schemes
	conn  *openapi.Connector
}

// documentReloadTimeout bounds the reading of a document on SIGHUP.
const documentReloadTimeout = 30 * time.Second

// openAPIConnector makes the connector of the openapi entry at url.
func (g *gateway) openAPIConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	g.mu.Lock()
	a, ok := g.apis[url]
	g.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", toolkit.ErrNotFound, url)
	}
	cfg := a.cfg.config()
	if len(a.users) > 0 {
		cfg.Credentials = maps.Clone(cfg.Credentials)
		for scheme, ua := range a.users {
			cfg.Credentials[scheme] = openapi.Credential{User: ua}
		}
	}
	cfg.Logger = g.logger.With("namespace", a.cfg.Name)
	c, err := openapi.New(cfg, onEvent)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	a.conn = c
	g.mu.Unlock()
	return c, nil
}

// addAPI registers an openapi entry with the toolkit.
func (g *gateway) addAPI(o OpenAPI) error {
	users, err := g.userAuthorizations(o)
	if err != nil {
		return fmt.Errorf("%s:%d: openapi: %q: %w", g.file, o.line, o.Name, err)
	}
	a := &api{cfg: o, users: users}
	g.mu.Lock()
	g.apis[o.endpoint()] = a
	g.mu.Unlock()
	if err := g.tk.AddConnectorNS(o.Name, o.endpoint()); err != nil {
		g.mu.Lock()
		delete(g.apis, o.endpoint())
		g.mu.Unlock()
		a.closeUsers()
		return fmt.Errorf("%s:%d: openapi: %q: %w", g.file, o.line, o.Name, err)
	}
	g.logger.Info("openapi added", "namespace", o.Name, "document", o.Document)
	return nil
}

// removeAPI stops an openapi entry and removes its tools.
func (g *gateway) removeAPI(o OpenAPI) {
	if err := g.tk.RemoveConnector(o.endpoint()); err != nil {
		g.logger.Warn("removing openapi", "namespace", o.Name, "error", err)
	}
	g.mu.Lock()
	a := g.apis[o.endpoint()]
	delete(g.apis, o.endpoint())
	g.mu.Unlock()
	if a != nil {
		a.closeUsers()
	}
	g.logger.Info("openapi removed", "namespace", o.Name)
}

// closeAPIs ends the user authorizations of every openapi entry, once
// the toolkit stopped.
func (g *gateway) closeAPIs() {
	g.mu.Lock()
	apis := slices.Collect(maps.Values(g.apis))
	g.mu.Unlock()
	for _, a := range apis {
		a.closeUsers()
	}
}

// reloadAPIs applies the openapi entries of a new configuration: those
// gone or changed are removed, new and changed ones added, and the
// documents of those kept are read again (their changed operations
// reach the clients as a changed tool list, and the pins). It returns
// the entries in force.
func (g *gateway) reloadAPIs(cur, next []OpenAPI) []OpenAPI {
	wanted := map[string]OpenAPI{}
	for _, o := range next {
		wanted[o.Name] = o
	}
	kept := map[string]bool{}
	for _, o := range cur {
		if n, ok := wanted[o.Name]; ok && n.sameAs(o) {
			kept[o.Name] = true
			g.reloadDocument(o)
			continue
		}
		g.removeAPI(o)
	}
	applied := make([]OpenAPI, 0, len(next))
	for _, o := range next {
		if kept[o.Name] {
			applied = append(applied, o)
			continue
		}
		if err := g.addAPI(o); err != nil {
			g.logger.Error("openapi refused", "namespace", o.Name, "error", err)
			continue
		}
		applied = append(applied, o)
	}
	return applied
}

// reloadDocument reads the document of a kept entry again.
func (g *gateway) reloadDocument(o OpenAPI) {
	g.mu.Lock()
	a := g.apis[o.endpoint()]
	g.mu.Unlock()
	if a == nil || a.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), documentReloadTimeout)
	defer cancel()
	if err := a.conn.Reload(ctx); err != nil {
		g.logger.Error("openapi document reload failed; keeping its tools", "namespace", o.Name, "error", err)
		return
	}
	g.logger.Info("openapi document read again", "namespace", o.Name)
}
