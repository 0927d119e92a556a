#!/usr/bin/env bash
# The end-to-end demo behind `make demo`: a real local control plane, two
# units from examples/ (app depends on infra; infra holds an age-encrypted
# Secret whose DEMO-ONLY key is committed), a diff after a change, a prune,
# the status table, then everything is stopped.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${BIN:-bin/kustomize-deploy}
dir=${DEMO_DIR:-$PWD/.demo}
rm -rf "$dir" && mkdir -p "$dir"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "starting the local cluster (etcd, kube-apiserver, controller-manager, scheduler, kwok)"
# Run the built binary itself (not `go run`), so the signal below reaches
# the process that owns the cluster.
go build -o "$dir/localcluster" ./cmd/localcluster
"$dir/localcluster" --dir "$dir/cluster" > "$dir/localcluster.log" 2>&1 &
cluster_pid=$!
trap 'kill -TERM $cluster_pid 2>/dev/null; wait $cluster_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  [ -f "$dir/cluster/kubeconfig" ] && break
  if ! kill -0 $cluster_pid 2>/dev/null; then cat "$dir/localcluster.log"; exit 1; fi
  sleep 0.5
done
[ -f "$dir/cluster/kubeconfig" ] || { echo "cluster did not start"; cat "$dir/localcluster.log"; exit 1; }
export KUBECONFIG=$dir/cluster/kubeconfig
grep 'cluster ready' "$dir/localcluster.log" || true

# A working copy of the examples, so the demo can edit them. --root keeps
# the build to that copy rather than the whole checkout around it.
work=$dir/repo
cp -r examples "$work"
export SOPS_AGE_KEY_FILE=$work/demo-age-key.txt   # DEMO ONLY key, committed on purpose

say "kustomize-deploy apply --name infra   (Namespace, ConfigMap, age-encrypted Secret)"
$bin apply --name infra --path "$work/infra" --root "$work" --revision demo-1

say "kustomize-deploy apply --name app --depends-on infra"
$bin apply --name app --path "$work/app" --root "$work" --depends-on infra --revision demo-1

say "change the image and remove legacy.yaml, then: kustomize-deploy diff"
sed -i 's/nginx:1.27/nginx:1.28/' "$work/app/deployment.yaml"
rm "$work/app/legacy.yaml"
sed -i '/legacy.yaml/d' "$work/app/kustomization.yaml"
$bin diff --name app --path "$work/app" --root "$work"

say "kustomize-deploy apply --name app   (configures the Deployment, prunes the ConfigMap)"
$bin apply --name app --path "$work/app" --root "$work" --depends-on infra --revision demo-2

say "kustomize-deploy status"
$bin status

say "done; stopping the cluster"
