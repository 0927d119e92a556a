// Package ecr logs in to Amazon ECR registries: the registry credentials
// of a Flux source with `provider: aws`, from ecr:GetAuthorizationToken
// signed with the AWS SDK's default credential chain (the environment,
// a web identity, the shared config), as source-controller gets them.
package ecr

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
)

// registryHost is an ECR registry's host: ACCOUNT.dkr.ecr[-fips].REGION.amazonaws.com[.cn].
var registryHost = regexp.MustCompile(`^([0-9]{12})\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$`)

// Login returns the basic-auth credentials of the ECR registry host
// (username AWS and a token valid for 12 hours). The region is the
// host's; a host that is not ECR's (a test's registry) takes the SDK's
// region (AWS_REGION). The token is a secret: the caller masks it.
func Login(ctx context.Context, host string) (username, password string, err error) {
	var loadOpts []func(*config.LoadOptions) error
	input := &ecr.GetAuthorizationTokenInput{}
	if m := registryHost.FindStringSubmatch(strings.Split(host, ":")[0]); m != nil {
		loadOpts = append(loadOpts, config.WithRegion(m[2]))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return "", "", fmt.Errorf("ECR registry %s: AWS configuration: %w", host, err)
	}
	if cfg.Region == "" {
		return "", "", fmt.Errorf("ECR registry %s: no AWS region (set AWS_REGION, or the region with aws-actions/configure-aws-credentials)", host)
	}
	out, err := ecr.NewFromConfig(cfg).GetAuthorizationToken(ctx, input)
	if err != nil {
		return "", "", fmt.Errorf("ECR registry %s: GetAuthorizationToken: %w", host, err)
	}
	if len(out.AuthorizationData) == 0 {
		return "", "", fmt.Errorf("ECR registry %s: GetAuthorizationToken returned no token", host)
	}
	raw, err := base64.StdEncoding.DecodeString(aws.ToString(out.AuthorizationData[0].AuthorizationToken))
	if err != nil {
		return "", "", fmt.Errorf("ECR registry %s: the authorization token is not base64", host)
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok || user == "" || pass == "" {
		return "", "", errors.New("ECR registry " + host + ": the authorization token is not user:password")
	}
	return user, pass, nil
}
