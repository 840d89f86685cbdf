// Command bundle-validate checks an OLM bundle directory with the operator-framework's own
// validation library (github.com/operator-framework/api: pkg/manifests loads the bundle,
// pkg/validation checks it), the same checks `operator-sdk bundle validate` runs with
// `--select-optional suite=operatorframework`:
//
//	bundle-validate [-k8s-version 1.37] [-strict] deploy/olm
//
// It prints every finding and exits 1 when there is an error (with -strict: also a warning),
// 2 when the bundle cannot be loaded. Built and cached by e2e/control-plane.sh build olm.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
)

func main() {
	k8sVersion := flag.String("k8s-version", "", "Kubernetes version the deprecated-API checks assume (default: the CSV's minKubeVersion)")
	strict := flag.Bool("strict", false, "fail on warnings too")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: bundle-validate [-k8s-version X.Y] [-strict] BUNDLE_DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	dir := flag.Arg(0)

	bundle, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bundle-validate: cannot load the bundle in %s: %v\n", dir, err)
		os.Exit(2)
	}

	// The default bundle validators (CSV, CRDs, bundle) and the optional
	// "operatorframework" suite: OperatorHub v2, standard categories and capabilities,
	// good practices, and APIs removed in the given Kubernetes version.
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCategoriesValidator,
		validation.StandardCapabilitiesValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
	)
	objects := append(bundle.ObjectsToValidate(), map[string]string{"k8s-version": *k8sVersion})
	if *k8sVersion == "" {
		objects = bundle.ObjectsToValidate()
	}

	// Some validators print a failure (a manifest they could not convert) instead of returning
	// it, and then skip their checks: whatever they print counts as an error.
	results, printed := capturingStdout(func() []errors.ManifestResult { return validators.Validate(objects...) })

	errorsFound, warnings := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(printed), "\n") {
		if line != "" {
			errorsFound++
			fmt.Printf("ERROR   printed by a validator (its checks did not run): %s\n", line)
		}
	}
	for _, result := range results {
		for _, e := range result.Errors {
			errorsFound++
			fmt.Printf("ERROR   %s: %s\n", result.Name, e.Error())
		}
		for _, w := range result.Warnings {
			warnings++
			fmt.Printf("WARNING %s: %s\n", result.Name, w.Error())
		}
	}
	fmt.Printf("bundle %s (%s): %d errors, %d warnings\n", dir, bundle.CSV.GetName(), errorsFound, warnings)
	if errorsFound > 0 || (*strict && warnings > 0) {
		os.Exit(1)
	}
}

// capturingStdout runs f with os.Stdout redirected, and returns its result and what it printed.
func capturingStdout(f func() []errors.ManifestResult) ([]errors.ManifestResult, string) {
	stdout := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bundle-validate: %v\n", err)
		os.Exit(2)
	}
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	os.Stdout = w
	results := f()
	os.Stdout = stdout
	w.Close()
	return results, <-done
}
