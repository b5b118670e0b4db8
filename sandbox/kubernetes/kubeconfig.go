package kubernetes

import (
	"context"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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
	cs, err := kubernetes.NewForConfig(b.rest)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(ttl.Seconds()))}}, metav1.CreateOptions{})
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
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	kc.Contexts[ns] = &clientcmdapi.Context{Cluster: b.cluster, AuthInfo: user, Namespace: ns}
	kc.CurrentContext = ns
	return clientcmd.Write(*kc)
}
