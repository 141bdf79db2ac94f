import { expect } from 'vitest';
import type { Rendered } from './helm-template.js';

/** The rendered objects of one kind, in the order the chart renders them. */
export const objectsOf = (rendered: Rendered, kind: string): Record<string, any>[] =>
  rendered.manifests.map((manifest) => manifest.object).filter((object) => object.kind === kind);

/** The one object of a kind; fails the test when there are none or several. */
export function single(rendered: Rendered, kind: string): Record<string, any> {
  const objects = objectsOf(rendered, kind);
  expect(objects, kind).toHaveLength(1);
  return objects[0]!;
}

/** The pod template of the chart's one Deployment. */
export const podOf = (rendered: Rendered): Record<string, any> => single(rendered, 'Deployment').spec.template.spec;

/** The one container of that pod. */
export function containerOf(rendered: Rendered): Record<string, any> {
  const containers = podOf(rendered).containers as Record<string, any>[];
  expect(containers).toHaveLength(1);
  return containers[0]!;
}

/** That container's env entries by name; fails the test on a name given twice. */
export function envOf(rendered: Rendered): Map<string, Record<string, any>> {
  const entries = (containerOf(rendered).env ?? []) as Record<string, any>[];
  const names = entries.map((entry) => entry.name as string);
  expect(new Set(names).size, `duplicate env names: ${names.join(', ')}`).toBe(names.length);
  return new Map(entries.map((entry) => [entry.name as string, entry]));
}
