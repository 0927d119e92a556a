module github.com/kustomize-deploy/kustomize-deploy/hack/tools/mdrender

go 1.26.0

require github.com/yuin/goldmark v1.8.7
