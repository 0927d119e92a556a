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
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
)

// registryHost is an ECR registry's host, as Flux accepts it for
// provider aws: ACCOUNT.dkr.ecr.REGION.amazonaws.com, its FIPS form
// (dkr.ecr-fips) and China's (.amazonaws.com.cn).
var registryHost = regexp.MustCompile(`^([0-9]{12})\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$`)

// Region is the region of the ECR registry host (host or host:443); an
// error, naming the host, when it is not an ECR registry: an ECR token
// is sent to ECR only, whatever a source's URL names.
func Region(host string) (string, error) {
	h := strings.ToLower(strings.TrimSuffix(host, ":443"))
	if m := registryHost.FindStringSubmatch(h); m != nil {
		return m[2], nil
	}
	return "", fmt.Errorf("%s is not an Amazon ECR registry (<account>.dkr.ecr.<region>.amazonaws.com, or its FIPS or China form): an ECR token is sent to ECR only", host)
}

// Options say which AWS credentials Login may use.
type Options struct {
	// EnvironmentOnly takes only the credentials the environment names
	// (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a web identity token
	// file, a profile), never the runner's own identity (EC2 instance
	// metadata, ECS container credentials), which no workflow asked for:
	// an offline diff of a fork's pull request runs the fork's
	// configuration.
	EnvironmentOnly bool
}

// Login returns the basic-auth credentials of the ECR registry host
// (username AWS and a token valid for 12 hours), from
// ecr:GetAuthorizationToken in the host's region. A host that is not
// ECR's is refused by name (see Region). The token is a secret: the
// caller masks it.
func Login(ctx context.Context, host string, o Options) (username, password string, err error) {
	region, err := Region(host)
	if err != nil {
		return "", "", err
	}
	loadOpts := []func(*config.LoadOptions) error{config.WithRegion(region)}
	if o.EnvironmentOnly {
		loadOpts = append(loadOpts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return "", "", fmt.Errorf("ECR registry %s: AWS configuration: %w", host, err)
	}
	if o.EnvironmentOnly {
		creds, err := cfg.Credentials.Retrieve(ctx)
		if err != nil || creds.Source == endpointcreds.ProviderName || creds.Source == ec2rolecreds.ProviderName {
			return "", "", fmt.Errorf("ECR registry %s: no AWS credentials in the environment, and an offline diff takes none from the runner's own identity (instance or container role)", host)
		}
	}
	out, err := ecr.NewFromConfig(cfg).GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
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
