package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TeamKubeconfig is a kubeconfig that authenticates as the ServiceAccount
// sa of namespace ns (docs/kubernetes.md's recipe makes "mcp-sandbox")
// with a token the cluster issues for ttl (a TokenRequest, as kubectl
// create token does), for the cluster the backend's kubeconfig reaches:
// what a platform team hands a team. Its context, named ns, has ns as its
// namespace.
func (b *Backend) TeamKubeconfig(ctx context.Context, ns, sa string, ttl time.Duration) ([]byte, error) {
	token, err := b.createToken(ctx, ns, sa, ttl)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: a token for ServiceAccount %s/%s (apply the recipe of docs/kubernetes.md first, as a cluster admin): %w", ns, sa, err)
	}
	ca := b.rest.CAData
	if len(ca) == 0 && b.rest.CAFile != "" {
		if ca, err = os.ReadFile(b.rest.CAFile); err != nil {
			return nil, fmt.Errorf("kubernetes: the cluster's CA: %w", err)
		}
	}
	user := sa + "@" + ns
	kc := clientcmdapi.NewConfig()
	kc.Clusters[b.cluster] = &clientcmdapi.Cluster{Server: b.rest.Host, CertificateAuthorityData: ca, InsecureSkipTLSVerify: b.rest.Insecure}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts[ns] = &clientcmdapi.Context{Cluster: b.cluster, AuthInfo: user, Namespace: ns}
	kc.CurrentContext = ns
	return clientcmd.Write(*kc)
}

// createToken asks the cluster for a token of the ServiceAccount (POST
// serviceaccounts/NAME/token, a TokenRequest), in JSON: the typed
// clientset would add most of client-go to every binary.
func (b *Backend) createToken(ctx context.Context, ns, sa string, ttl time.Duration) (string, error) {
	req, err := json.Marshal(map[string]any{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		"spec": map[string]any{"expirationSeconds": int64(ttl.Seconds())},
	})
	if err != nil {
		return "", err
	}
	raw, err := b.cs.coreREST.Post().Namespace(ns).Resource("serviceaccounts").Name(sa).SubResource("token").
		SetHeader("Content-Type", "application/json").Body(req).Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var res struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Status.Token == "" {
		return "", fmt.Errorf("the cluster's answer holds no token (%v)", err)
	}
	return res.Status.Token, nil
}
