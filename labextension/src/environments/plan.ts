/**
 * The plan of a package change, asked of the server (`dry_run`) and shown
 * before anything changes: what is installed, upgraded, downgraded and
 * removed, what must be downloaded, and what the user did not name. Removals
 * the user did not name need an explicit tick before Apply is possible.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { formatBytes } from '../components/format';
import { h } from '../components/form';
import type {
  IPackagesPlan,
  IPackagesRequest,
  IPlannedChange,
  ITask,
  PlanAction
} from '../api/types';
import { EnvironmentsClient } from './client';
import { TasksClient, isFinal } from './tasks';

/** How often the plan's task is asked about, at first and at most (ms). */
const PLAN_POLL_FIRST = 250;
const PLAN_POLL_MAX = 2000;

const VERBS: Record<PlanAction, string> = {
  install: 'install',
  upgrade: 'upgrade',
  downgrade: 'downgrade',
  change: 'rebuild',
  remove: 'remove'
};

/** Ask the server for the plan of `request` and wait for it. */
export async function fetchPlan(
  client: EnvironmentsClient,
  name: string,
  request: IPackagesRequest
): Promise<IPackagesPlan> {
  const tasks = new TasksClient(client.serverSettings);
  let task: ITask = await client.changePackages(name, {
    ...request,
    dry_run: true
  });
  let delay = PLAN_POLL_FIRST;
  while (!isFinal(task)) {
    await new Promise(resolve => window.setTimeout(resolve, delay));
    delay = Math.min(delay * 2, PLAN_POLL_MAX);
    task = await tasks.get(task.id);
  }
  if (task.state !== 'succeeded') {
    throw new Error(task.message || `Planning ${task.state}.`);
  }
  return task.result as IPackagesPlan;
}

function versions(change: IPlannedChange): string {
  const before = change.version_before ?? '';
  const after = change.version_after ?? '';
  if (before && after && before !== after) {
    return `${before} → ${after}`;
  }
  return after || before;
}

function download(change: IPlannedChange): string {
  if (change.action === 'remove') {
    return '';
  }
  if (change.download_bytes === null) {
    return 'size unknown';
  }
  return change.download_bytes === 0
    ? 'cached'
    : formatBytes(change.download_bytes);
}

/** The plan as a table, its warnings, and the tick for unnamed removals. */
export class PlanBody extends Widget implements Dialog.IBodyWidget<boolean> {
  constructor(plan: IPackagesPlan) {
    super({
      node: h('div', { class: 'jp-GpuEnv-plan', 'data-testid': 'gpu-env-plan' })
    });
    for (const warning of plan.warnings) {
      this.node.append(
        h('p', { class: 'jp-GpuEnv-planWarning', role: 'alert' }, warning)
      );
    }
    const rows = plan.changes.map(change =>
      h(
        'tr',
        {
          class: `jp-GpuEnv-plan-${change.action}`,
          'data-unrequested':
            change.action === 'remove' && !change.requested ? 'true' : undefined
        },
        h('td', { class: 'jp-GpuEnv-planAction' }, VERBS[change.action]),
        h('td', {}, change.name),
        h('td', {}, change.kind === 'pypi' ? 'PyPI' : 'conda'),
        h('td', {}, versions(change)),
        h('td', { class: 'jp-GpuEnv-planSize' }, download(change))
      )
    );
    const head = h(
      'tr',
      {},
      ...['', 'package', 'from', 'version', 'download'].map(t => h('th', {}, t))
    );
    this.node.append(
      h(
        'table',
        { class: 'jp-GpuEnv-planTable' },
        h('thead', {}, head),
        h('tbody', {}, ...rows)
      ),
      h(
        'p',
        { class: 'jp-GpuEnv-fieldHint' },
        `${plan.changes.length} package${plan.changes.length === 1 ? '' : 's'}; ` +
          `${formatBytes(plan.download_bytes)} to download.`
      )
    );
    if (plan.unrequested_removals.length > 0) {
      this._confirm = h('input', {
        type: 'checkbox',
        'data-testid': 'gpu-env-plan-confirm'
      });
      this._confirm.addEventListener('change', () => this._enableApply());
      this.node.append(
        h(
          'label',
          { class: 'jp-GpuEnv-planConfirm' },
          this._confirm,
          ` Also remove ${plan.unrequested_removals.join(', ')}, which I did not pick`
        )
      );
    }
  }

  getValue(): boolean {
    return this._confirm === null || this._confirm.checked;
  }

  protected override onAfterAttach(): void {
    this._enableApply();
  }

  /** Apply stays disabled until unnamed removals are confirmed. */
  private _enableApply(): void {
    const dialog = this.node.closest('.jp-Dialog-content');
    const apply = dialog?.querySelector<HTMLButtonElement>('.jp-mod-accept');
    if (apply) {
      apply.disabled = !this.getValue();
    }
  }

  private _confirm: HTMLInputElement | null = null;
}

/**
 * Show the plan of `request` for `name`; answers whether the user chose to
 * apply it (null when planning failed, already reported).
 */
export async function reviewPlan(
  client: EnvironmentsClient,
  name: string,
  request: IPackagesRequest
): Promise<boolean | null> {
  let plan: IPackagesPlan;
  try {
    const asked = fetchPlan(client, name, request);
    Notification.promise(asked, {
      pending: { message: `Planning the change of '${name}'…`, options: {} },
      success: {
        message: () => `Plan of '${name}' ready.`,
        options: { autoClose: 1500 }
      },
      error: {
        message: (reason: unknown) =>
          `Could not plan the change of '${name}': ${String(reason instanceof Error ? reason.message : reason)}`
      }
    });
    plan = await asked;
  } catch {
    return null;
  }
  if (plan.changes.length === 0) {
    Notification.info(`Nothing would change in '${name}'.`, {
      autoClose: 4000
    });
    return false;
  }
  const result = await showDialog({
    title: `Plan for '${name}'`,
    body: new PlanBody(plan),
    buttons: [
      Dialog.cancelButton({ label: 'Back out' }),
      Dialog.okButton({ label: 'Apply' })
    ]
  });
  return result.button.accept && result.value === true;
}
