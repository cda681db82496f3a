package resource

// WithURI returns r with its URI replaced by uri; the other fields and the
// content are r's. uri is not checked here: a resource with an invalid URI
// is refused where URIs matter, for instance when it is registered with the
// toolkit (see [CheckURI]). Wrapping a resource made by this package, or one
// already returned by WithURI or [WithDescription], does not stack wrappers:
// the field is replaced. A nil r gives nil.
func WithURI(uri string, r Resource) Resource {
	return override(r, func(m *memory) { m.uri = uri }, func(w *wrapped) { w.uri, w.hasURI = uri, true })
}

// WithDescription returns r with its description replaced by desc; see
// [WithURI] for how wrappers combine. A nil r gives nil.
func WithDescription(desc string, r Resource) Resource {
	return override(r, func(m *memory) { m.desc = desc }, func(w *wrapped) { w.desc, w.hasDesc = desc, true })
}

// override returns a copy of r with one field replaced: setMem sets it on
// a resource of this package, setWrap on a wrapper (a new one for a
// resource from elsewhere). A nil r gives nil.
func override(r Resource, setMem func(*memory), setWrap func(*wrapped)) Resource {
	switch x := r.(type) {
	case nil:
		return nil
	case *memory:
		m := *x
		setMem(&m)
		return &m
	case *wrapped:
		w := *x
		setWrap(&w)
		return &w
	}
	w := &wrapped{Resource: r}
	setWrap(w)
	return w
}

// wrapped overrides the URI and/or description of a resource from
// elsewhere.
type wrapped struct {
	Resource
	uri, desc       string
	hasURI, hasDesc bool
}

// URI returns the overriding URI, or the wrapped resource's.
func (w *wrapped) URI() string {
	if w.hasURI {
		return w.uri
	}
	return w.Resource.URI()
}

// Description returns the overriding description, or the wrapped
// resource's.
func (w *wrapped) Description() string {
	if w.hasDesc {
		return w.desc
	}
	return w.Resource.Description()
}

// Unwrap returns the wrapped resource.
func (w *wrapped) Unwrap() Resource { return w.Resource }
