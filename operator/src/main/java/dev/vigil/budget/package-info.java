/**
 * The probe budget (docs/design.md §9, issue 37): which class each backend is in, how far each
 * class's interval stretches so that a replica's probes stay within {@code --probe-budget}, how the
 * budget is shared between namespaces and pools, and the detection time a pool gets under the
 * stretch. Pure: no Kubernetes, no Vert.x, time passed in; {@code runtime.ProbeBudgets} runs it
 * once a second and hands each pool's scheduler its stretch.
 */
package dev.vigil.budget;
