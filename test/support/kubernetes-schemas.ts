/**
 * Validates rendered manifests against the Kubernetes API's JSON schemas, as
 * kubernetes-models compiles them (core and apps groups, autoscaling, policy,
 * networking), and those of the custom resources the charts make:
 * ServiceMonitor (Prometheus Operator) and ScaledObject (KEDA). Types,
 * required fields and enums are checked; an object of a kind with no model
 * here is an error, not a pass.
 */
import type { Model } from '@kubernetes-models/base';

type ModelClass = new (data: Record<string, unknown>) => Model<unknown>;

/** apiVersion → module that exports its kinds. */
const MODULES: Record<string, () => Promise<Record<string, unknown>>> = {
  v1: () => import('kubernetes-models/v1'),
  'apps/v1': () => import('kubernetes-models/apps/v1'),
  'autoscaling/v2': () => import('kubernetes-models/autoscaling/v2'),
  'policy/v1': () => import('kubernetes-models/policy/v1'),
  'networking.k8s.io/v1': () => import('kubernetes-models/networking.k8s.io/v1'),
  'monitoring.coreos.com/v1': () => import('@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'),
  'keda.sh/v1alpha1': () => import('@kubernetes-models/keda/keda.sh/v1alpha1'),
};

/** What is wrong with the object by its kind's schema; empty when it is valid. */
export async function kubernetesSchemaErrors(object: Record<string, any>): Promise<string[]> {
  const where = `${object.apiVersion} ${object.kind} ${object.metadata?.name}`;
  const load = MODULES[String(object.apiVersion)];
  if (!load) return [`${where}: no schema for apiVersion ${object.apiVersion}`];
  const model = (await load())[String(object.kind)] as ModelClass | undefined;
  if (!model) return [`${where}: no schema for kind ${object.kind}`];
  try {
    new model(object).validate();
    return [];
  } catch (error) {
    return [`${where}: ${(error as Error).message}`];
  }
}
