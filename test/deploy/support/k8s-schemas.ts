import type { Manifest } from './kustomize.js';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';

/*
 * The OpenAPI schemas objects are validated against, offline: Kubernetes' own (kubernetes-models)
 * and the Prometheus Operator's CRDs (@kubernetes-models/prometheus-operator).
 */

interface ModelClass {
  apiVersion: string;
  kind: string;
  new (data: never): { validate(): void };
}

const MODELS: ModelClass[] = [
  ConfigMap,
  Namespace,
  Secret,
  Service,
  Deployment,
  Job,
  HorizontalPodAutoscaler,
  PodDisruptionBudget,
  Ingress,
  NetworkPolicy,
  // The Prometheus Operator's CRDs (k8s/components/monitoring), from their published schemas.
  PodMonitor,
  PrometheusRule,
] as unknown as ModelClass[];

/** Throws naming the first field the schema of the object's apiVersion/kind refuses. */
export function validateAgainstSchema(manifest: Manifest): void {
  const Model = MODELS.find(
    (m) => m.apiVersion === manifest.apiVersion && m.kind === manifest.kind,
  );
  if (!Model) throw new Error(`no schema known for ${manifest.apiVersion} ${manifest.kind}`);
  new Model(manifest as never).validate();
}
