package kstatus_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	fluxstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// The two kstatus lines: the Kubernetes project's, and Flux's fork of it, which
// kustomize-controller's `wait: true` and helm-controller use.
var libraries = map[string]func(*unstructured.Unstructured) (*status.Result, error){
	"sigs.k8s.io/cli-utils": status.Compute,
	"github.com/fluxcd/cli-utils": func(u *unstructured.Unstructured) (*status.Result, error) {
		result, err := fluxstatus.Compute(u)
		if err != nil {
			return nil, err
		}
		return &status.Result{Status: status.Status(result.Status), Message: result.Message}, nil
	},
}

// What kstatus must compute for each capture (file name without .json). A capture without an
// expectation, or an expectation without a capture, fails the test.
var expected = map[string]status.Status{
	"kafkatopic-Created":                         status.CurrentStatus,
	"kafkatopic-Reconciling":                     status.InProgressStatus,
	"kafkatopic-ReassignmentInProgress":          status.InProgressStatus,
	"kafkatopic-BrokersUnavailable":              status.InProgressStatus,
	"kafkatopic-DeletionInProgress":              status.TerminatingStatus,
	"kafkatopic-PartitionsOffline":               status.FailedStatus,
	"kafkatopic-InvalidSpec":                     status.FailedStatus,
	"kafkatopic-Conflict":                        status.FailedStatus,
	"kafkatopic-NotSupported":                    status.FailedStatus,
	"kafkatopic-UnreadableZNode":                 status.FailedStatus,
	"kafkatopic-DeletionIneligible":              status.TerminatingStatus,
	"kafkatopic-DeletionDisabled":                status.TerminatingStatus,
	"kafkatopic-ReconciliationPaused":            status.InProgressStatus,
	"kafkatopic-Unmanaged":                       status.InProgressStatus,
	"kafkatopic-ZooKeeperUnavailable":            status.InProgressStatus,
	"kafkatopic-KafkaUnavailable":                status.InProgressStatus,
	"kafkarebalance-PendingProposal-Planning":    status.InProgressStatus,
	"kafkarebalance-ProposalReady-ProposalReady": status.CurrentStatus,
	"kafkarebalance-Rebalancing-Rebalancing":     status.InProgressStatus,
	"kafkarebalance-Ready-RebalanceComplete":     status.CurrentStatus,
	"kafkarebalance-Stopped-Stopped":             status.CurrentStatus,
	"kafkarebalance-NotReady-CannotPlan":         status.FailedStatus,
	"kafkarebalance-NotReady-ProposalFailed":     status.FailedStatus,
}

func captures(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	dir := os.Getenv("KTO_CAPTURED")
	if dir == "" {
		dir = filepath.Join("..", "captured")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured objects in %s (%v)", dir, err)
	}
	found := map[string]*unstructured.Unstructured{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// As the API machinery decodes it (whole numbers as int64), as kstatus expects.
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(data); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		found[strings.TrimSuffix(filepath.Base(file), ".json")] = obj
	}
	return found
}

// The status both libraries compute; they must agree.
func compute(t *testing.T, name string, obj *unstructured.Unstructured) *status.Result {
	t.Helper()
	var first *status.Result
	for library, fn := range libraries {
		result, err := fn(obj.DeepCopy())
		if err != nil {
			t.Fatalf("%s: %s could not compute a status: %v", name, library, err)
		}
		if first != nil && (result.Status != first.Status || result.Message != first.Message) {
			t.Fatalf("%s: the two kstatus libraries disagree: %s %q and %s %q",
				name, first.Status, first.Message, result.Status, result.Message)
		}
		first = result
	}
	return first
}

func TestEachCaptureHasTheStatusFluxWaitsFor(t *testing.T) {
	found := captures(t)
	for name, obj := range found {
		want, ok := expected[name]
		if !ok {
			t.Errorf("%s: captured, but no expected kstatus status", name)
			continue
		}
		if got := compute(t, name, obj); got.Status != want {
			t.Errorf("%s: kstatus says %s (%q), want %s", name, got.Status, got.Message, want)
		}
	}
	for name := range expected {
		if _, ok := found[name]; !ok {
			t.Errorf("%s: expected, but no end-to-end test captured it", name)
		}
	}
}

// A stuck resource's message is the operator's own, so `flux get` and kpt say why.
func TestStalledResourcesCarryTheOperatorsMessage(t *testing.T) {
	for name, obj := range captures(t) {
		result := compute(t, name, obj)
		if result.Status != status.FailedStatus {
			continue
		}
		conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		first, _ := conditions[0].(map[string]any)
		if first["message"] == "" || result.Message != first["message"] {
			t.Errorf("%s: kstatus message %q, the operator's %q", name, result.Message, first["message"])
		}
	}
}

// A spec change the operator has not seen yet is in progress whatever the last status said.
func TestAGenerationNotYetObservedIsInProgress(t *testing.T) {
	for name, obj := range captures(t) {
		if obj.GetDeletionTimestamp() != nil {
			continue // kstatus says Terminating before it looks at generations
		}
		newer := obj.DeepCopy()
		newer.SetGeneration(obj.GetGeneration() + 1)
		result := compute(t, name, newer)
		if result.Status != status.InProgressStatus {
			t.Errorf("%s one generation on: kstatus says %s, want InProgress", name, result.Status)
		}
	}
}
