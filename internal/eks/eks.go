// Package eks connects to an Amazon EKS cluster without a kubeconfig and
// without the aws CLI or aws-iam-authenticator: the cluster's endpoint and
// CA come from EKS DescribeCluster, and the bearer token is what
// `aws eks get-token` makes, a presigned STS GetCallerIdentity request
// bound to the cluster's name. Credentials come from the AWS SDK's standard
// chain (environment, web identity as aws-actions/configure-aws-credentials
// sets it up with GitHub OIDC, shared config, container and instance
// roles); AWS_ENDPOINT_URL_EKS and AWS_ENDPOINT_URL_STS are honoured.
package eks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"golang.org/x/oauth2"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// The token, as aws-iam-authenticator and EKS read it.
const (
	// TokenPrefix starts every token; the rest is the presigned URL,
	// base64url without padding.
	TokenPrefix = "k8s-aws-v1."
	// ClusterIDHeader binds the token to one cluster: it is signed, so a
	// token made for one cluster fails STS's check for another.
	ClusterIDHeader = "x-k8s-aws-id"
	// presignExpiry is the URL's X-Amz-Expires, as `aws eks get-token`.
	presignExpiry = 60
	// tokenLifetime is how long EKS accepts a token (15 minutes after
	// signing), less a margin; a new one is made after that.
	tokenLifetime = 14 * time.Minute
)

// Options name the cluster.
type Options struct {
	// Cluster is the EKS cluster's name.
	Cluster string
	// Region is the cluster's region; empty means the SDK's (AWS_REGION,
	// AWS_DEFAULT_REGION, the profile's).
	Region string
}

// Config returns a client configuration for the cluster: its endpoint and
// CA from DescribeCluster, and bearer tokens made from the ambient AWS
// credentials, renewed before EKS would reject them. ctx bounds every
// later token renewal too.
func Config(ctx context.Context, opts Options) (*rest.Config, error) {
	if opts.Cluster == "" {
		return nil, errors.New("no EKS cluster name")
	}
	var loadOpts []func(*config.LoadOptions) error
	if opts.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opts.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("EKS cluster %s: AWS configuration: %w", opts.Cluster, err)
	}
	if cfg.Region == "" {
		return nil, fmt.Errorf("EKS cluster %s: no AWS region (set AWS_REGION, or the region with aws-actions/configure-aws-credentials)", opts.Cluster)
	}
	out, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(opts.Cluster)})
	if err != nil {
		return nil, fmt.Errorf("EKS cluster %s in %s: DescribeCluster: %w", opts.Cluster, cfg.Region, err)
	}
	c := out.Cluster
	if c == nil || aws.ToString(c.Endpoint) == "" || c.CertificateAuthority == nil {
		status := ekstypes.ClusterStatus("unknown")
		if c != nil {
			status = c.Status
		}
		return nil, fmt.Errorf("EKS cluster %s in %s has no endpoint or CA yet (status %s)", opts.Cluster, cfg.Region, status)
	}
	ca, err := base64.StdEncoding.DecodeString(aws.ToString(c.CertificateAuthority.Data))
	if err != nil {
		return nil, fmt.Errorf("EKS cluster %s: certificate authority data: %w", opts.Cluster, err)
	}
	tokens := &tokenSource{ctx: ctx, cluster: opts.Cluster, presign: sts.NewPresignClient(sts.NewFromConfig(cfg))}
	return &rest.Config{
		Host:            aws.ToString(c.Endpoint),
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		WrapTransport:   transport.TokenSourceWrapTransport(oauth2.ReuseTokenSource(nil, tokens)),
	}, nil
}

// Token makes one bearer token for cluster from cfg's credentials.
func Token(ctx context.Context, cfg aws.Config, cluster string) (string, error) {
	t := &tokenSource{ctx: ctx, cluster: cluster, presign: sts.NewPresignClient(sts.NewFromConfig(cfg))}
	tok, err := t.Token()
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

// tokenSource makes EKS tokens: presigned STS GetCallerIdentity URLs.
type tokenSource struct {
	ctx     context.Context
	cluster string
	presign *sts.PresignClient
}

func (t *tokenSource) Token() (*oauth2.Token, error) {
	signedAt := time.Now()
	req, err := t.presign.PresignGetCallerIdentity(t.ctx, &sts.GetCallerIdentityInput{}, func(o *sts.PresignOptions) {
		o.ClientOptions = append(o.ClientOptions, sts.WithAPIOptions(
			smithyhttp.AddHeaderValue(ClusterIDHeader, t.cluster),
			addExpires,
		))
	})
	if err != nil {
		return nil, fmt.Errorf("EKS cluster %s: presigning sts:GetCallerIdentity: %w", t.cluster, err)
	}
	return &oauth2.Token{
		AccessToken: TokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(req.URL)),
		TokenType:   "Bearer",
		Expiry:      signedAt.Add(tokenLifetime),
	}, nil
}

// addExpires puts X-Amz-Expires in the query before presigning, which
// signs it: the signer only honours an expiry the request already has.
func addExpires(stack *middleware.Stack) error {
	return stack.Build.Add(middleware.BuildMiddlewareFunc("KustomizeDeployPresignExpires",
		func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
			if req, ok := in.Request.(*smithyhttp.Request); ok {
				q := req.URL.Query()
				q.Set("X-Amz-Expires", fmt.Sprint(presignExpiry))
				req.URL.RawQuery = q.Encode()
			}
			return next.HandleBuild(ctx, in)
		}), middleware.After)
}
