package health

import (
	"os"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster)) }
