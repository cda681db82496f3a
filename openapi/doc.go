// Package openapi serves the operations of an OpenAPI document as tools.
package openapi
