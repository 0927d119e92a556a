package main

import "github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"

// The Helm scenario's charts are helmtest's bench charts (the render
// path's tests render the same ones).
const (
	chartBig     = helmtest.BenchChartBig
	chartIngress = helmtest.BenchChartIngress
	chartCerts   = helmtest.BenchChartCerts
	chartApp     = helmtest.BenchChartApp
	chartVersion = helmtest.BenchChartVersion
	certsCRD     = helmtest.BenchCertsCRD
	helmBigCount = helmtest.BenchBigCount
)

// writeCharts writes every chart into dir/<name>.
func writeCharts(dir string) error { return helmtest.WriteBenchCharts(dir) }

// layoutDeployments are the Deployments each chart of the example layout
// renders, counted after a deploy so that a tool that did less does not
// look fast.
var layoutDeployments = map[string]int{chartIngress: 1, chartCerts: 1, chartApp: 1}
