/**
 * "Does this environment see the GPU?": the result of the server's check
 * (run with the environment's own Python) in words, and the dialog with what
 * it found — the driver, the devices, a computation with torch or cupy.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { h } from '../components/form';
import type { ITask } from '../api/types';

/** The kind of the task that runs a check. */
export const GPU_CHECK_KIND = 'gpu-check';

/**
 * A check's result, the server's `GpuCheck`. It arrives as a task's result,
 * which the API document leaves untyped, so its shape is written here.
 */
export interface IGpuCheck {
  ok: boolean;
  message: string;
  details: {
    python?: string;
    prefix?: string;
    cuda_visible_devices?: string | null;
    driver?: {
      loaded: boolean;
      count: number;
      names?: string[];
      error?: string;
    };
    framework?: {
      name: string;
      version?: string;
      cuda_build?: string | null;
      available?: boolean;
      count?: number;
      computed?: boolean;
      error?: string;
    } | null;
  };
}

export function isGpuCheck(value: unknown): value is IGpuCheck {
  return (
    typeof value === 'object' &&
    value !== null &&
    'ok' in value &&
    'message' in value &&
    'details' in value
  );
}

/** The environment a check is about: its task's target is `environments/<name>/gpu`. */
export function checkedEnvironment(task: ITask): string {
  return task.target?.split('/')[1] ?? '';
}

/** One sentence: whether the environment can use a GPU, and why. */
export function describeGpuCheck(
  environment: string,
  check: IGpuCheck
): string {
  return check.ok
    ? `'${environment}' sees the GPU: ${check.message}`
    : `'${environment}' cannot use a GPU: ${check.message}`;
}

/**
 * What the check found, by label (the lines `jupyter gpu-env check` prints):
 * the Python that ran it, the devices it was given, the driver, and the
 * computation tried with torch or cupy.
 */
export function gpuCheckFacts(check: IGpuCheck): [string, string][] {
  const raw = check.details;
  if (Object.keys(raw).length === 0) {
    return []; // the check could not run; its message says why
  }
  const facts: [string, string][] = [
    ['Python', `${raw.python ?? '?'} at ${raw.prefix ?? '?'}`],
    ['CUDA_VISIBLE_DEVICES', raw.cuda_visible_devices || 'not set']
  ];
  const driver = raw.driver;
  if (driver?.loaded) {
    const names = (driver.names ?? []).join(', ');
    const problem = driver.error ? ` (${driver.error})` : '';
    facts.push([
      'Driver',
      `loaded, ${driver.count} device(s)${names ? `: ${names}` : ''}${problem}`
    ]);
  } else {
    facts.push([
      'Driver',
      `not loaded: ${driver?.error || 'libcuda cannot be loaded'}`
    ]);
  }
  const fw = raw.framework;
  if (!fw) {
    facts.push([
      'Computation',
      'not tried: neither torch nor cupy is installed'
    ]);
  } else if (fw.error) {
    facts.push(['Computation', `${fw.name}: ${fw.error}`]);
  } else {
    const build = fw.cuda_build ? `, CUDA ${fw.cuda_build}` : '';
    const result = !fw.available
      ? 'no usable device'
      : fw.computed !== false
        ? `${fw.count ?? 0} device(s), a computation gave the right answer`
        : 'a computation on the GPU gave a wrong answer';
    facts.push([
      'Computation',
      `${fw.name} ${fw.version ?? ''}${build}: ${result}`
    ]);
  }
  return facts;
}

/** A dialog with the verdict and every fact the check found. */
export async function showGpuCheck(
  environment: string,
  check: IGpuCheck
): Promise<void> {
  const facts = gpuCheckFacts(check);
  const body = h(
    'div',
    {
      class: 'jp-GpuEnv-gpuCheck',
      'data-testid': 'gpu-env-gpu-check',
      'data-ok': String(check.ok)
    },
    h('p', { class: 'jp-GpuEnv-gpuCheckVerdict' }, check.message),
    h(
      'table',
      { class: 'jp-GpuEnv-facts' },
      ...facts.map(([label, value]) =>
        h(
          'tr',
          { 'data-fact': label },
          h('th', { scope: 'row' }, label),
          h('td', {}, value)
        )
      )
    )
  );
  await showDialog({
    title: check.ok
      ? `'${environment}' sees the GPU`
      : `'${environment}' cannot use a GPU`,
    body: new Widget({ node: body }),
    buttons: [Dialog.okButton({ label: 'Close' })]
  });
}
