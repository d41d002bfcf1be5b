package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName names the cluster, user and context of the kubeconfig.
const contextName = "envtest-apiserver"

// kubeconfigFor is the kubeconfig of config: its host, TLS settings and
// credentials, in one context that is the current one. It refuses a config
// that carries what a kubeconfig cannot (a custom transport or dialer).
func kubeconfigFor(config *rest.Config) (*clientcmdapi.Config, error) {
	if config.Transport != nil || config.WrapTransport != nil || config.Dial != nil {
		return nil, errors.New("the server's rest.Config has a custom transport or dialer, which a kubeconfig cannot hold")
	}
	tls := config.TLSClientConfig
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters[contextName] = &clientcmdapi.Cluster{
		Server:                   config.Host,
		TLSServerName:            tls.ServerName,
		InsecureSkipTLSVerify:    tls.Insecure,
		CertificateAuthority:     tls.CAFile,
		CertificateAuthorityData: tls.CAData,
	}
	kubeconfig.AuthInfos[contextName] = &clientcmdapi.AuthInfo{
		ClientCertificate:     tls.CertFile,
		ClientCertificateData: tls.CertData,
		ClientKey:             tls.KeyFile,
		ClientKeyData:         tls.KeyData,
		Token:                 config.BearerToken,
		TokenFile:             config.BearerTokenFile,
		Username:              config.Username,
		Password:              config.Password,
	}
	kubeconfig.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName, Namespace: "default"}
	kubeconfig.CurrentContext = contextName
	return kubeconfig, nil
}

// writeKubeconfig writes config's kubeconfig to path, creating its directory,
// with mode 0600 (it holds a cluster administrator's token). The file
// appears whole: it is written beside path, then linked to it, which fails
// if path exists.
func writeKubeconfig(path string, config *rest.Config) error {
	kubeconfig, err := kubeconfigFor(config)
	if err != nil {
		return err
	}
	data, err := clientcmd.Write(*kubeconfig)
	if err != nil {
		return fmt.Errorf("encode the kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubeconfig-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errKubeconfigExists(path)
		}
		return err
	}
	return nil
}

// checkKubeconfigPath fails if path exists, before the servers start.
func checkKubeconfigPath(path string) error {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return errKubeconfigExists(path)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return err
	}
}

func errKubeconfigExists(path string) error {
	return fmt.Errorf("-kubeconfig %s exists: remove it or name another file (envtest-apiserver writes a new kubeconfig and removes it at exit)", path)
}
