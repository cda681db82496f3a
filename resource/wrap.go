package resource

// WithURI returns r with its URI replaced by uri; the other fields and the
// content are r's. uri is not checked here: a resource with an invalid URI
// is refused where URIs matter, for instance when it is registered with the
// toolkit (see [CheckURI]). Wrapping a resource made by this package, or one
// already returned by WithURI or [WithDescription], does not stack wrappers:
// the field is replaced. A nil r gives nil.
func WithURI(uri string, r Resource) Resource {
	switch x := r.(type) {
	case nil:
		return nil
	case *memory:
		m := *x
		m.uri = uri
		return &m
	case *wrapped:
		w := *x
		w.uri, w.hasURI = uri, true
		return &w
	}
	return &wrapped{Resource: r, uri: uri, hasURI: true}
}

// WithDescription returns r with its description replaced by desc; see
// [WithURI] for how wrappers combine. A nil r gives nil.
func WithDescription(desc string, r Resource) Resource {
	switch x := r.(type) {
	case nil:
		return nil
	case *memory:
		m := *x
		m.desc = desc
		return &m
	case *wrapped:
		w := *x
		w.desc, w.hasDesc = desc, true
		return &w
	}
	return &wrapped{Resource: r, desc: desc, hasDesc: true}
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
