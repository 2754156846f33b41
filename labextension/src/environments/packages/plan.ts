/**
 * The plan of a package change, asked of the server (`dry_run`) and shown
 * before anything changes: what is installed, upgraded, downgraded and
 * removed, what must be downloaded, and what the user did not name. Removals
 * the user did not name need an explicit tick before Apply is possible.
 * The plan of a new environment made from a file is shown the same way
 * (every change an install).
 */
import {
  Dialog,
  Notification,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { messageOf } from '../../api/request';
import { h } from '../../components/form';
import type {
  ICreateRequest,
  IPackagesPlan,
  IPackagesRequest,
  ITask
} from '../../api/types';
import { EnvironmentsClient } from '../client';
import { cleanMessage } from '../format';
import { isUnrequestedRemoval, planCells, planSummary } from './plan-lines';
import { TasksClient, isFinal } from '../../tasks/tracker';

/** How often the plan's task is asked about, at first and at most (ms). */
const PLAN_POLL_FIRST = 250;
const PLAN_POLL_MAX = 2000;

/** Ask the server for the plan of `request` and wait for it. */
export function fetchPlan(
  client: EnvironmentsClient,
  name: string,
  request: IPackagesRequest
): Promise<IPackagesPlan> {
  return waitPlan(client, () =>
    client.changePackages(name, { ...request, dry_run: true })
  );
}

/** Start a `plan` task (a `dry_run` request) and wait for its plan. */
async function waitPlan(
  client: EnvironmentsClient,
  start: () => Promise<ITask>
): Promise<IPackagesPlan> {
  const tasks = new TasksClient(client.serverSettings);
  let task: ITask = await start();
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

/** The classes of a plan row's cells: the verb's and the download's. */
const CELL_CLASSES = [
  'jp-GpuEnv-planAction',
  undefined,
  undefined,
  undefined,
  'jp-GpuEnv-planSize'
];

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
          'data-unrequested': isUnrequestedRemoval(change) ? 'true' : undefined
        },
        ...planCells(change).map((text, i) =>
          h('td', { class: CELL_CLASSES[i] }, text)
        )
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
      h('p', { class: 'jp-GpuEnv-fieldHint' }, planSummary(plan))
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

/** What the plan's notifications and dialog say. */
interface IPlanWords {
  /** While planning: "Planning the change of 'x'…". */
  pending: string;
  /** Once ready: "Plan of 'x' ready.". */
  ready: string;
  /** Before the reason: "Could not plan the change of 'x'". */
  failed: string;
  /** When nothing would change. */
  nothing: string;
  title: string;
  /** The accept button's label. */
  apply: string;
}

/**
 * Show the plan of `request` for `name`; answers whether the user chose to
 * apply it (null when planning failed, already reported).
 */
export function reviewPlan(
  client: EnvironmentsClient,
  name: string,
  request: IPackagesRequest
): Promise<boolean | null> {
  return showPlan(fetchPlan(client, name, request), {
    pending: `Planning the change of '${name}'…`,
    ready: `Plan of '${name}' ready.`,
    failed: `Could not plan the change of '${name}'`,
    nothing: `Nothing would change in '${name}'.`,
    title: `Plan for '${name}'`,
    apply: 'Apply'
  });
}

/**
 * Show what making `request.name` from `request.from_file` would install;
 * answers whether the user chose to create it (null when planning failed,
 * already reported with the server's message).
 */
export async function reviewCreatePlan(
  client: EnvironmentsClient,
  request: ICreateRequest
): Promise<boolean | null> {
  const { name, from_file: file } = request;
  let task: ITask;
  try {
    task = await client.create({ ...request, dry_run: true });
  } catch (reason) {
    // The file cannot be used: the server says where and why, in full.
    await showErrorMessage(
      `Cannot create '${name}' from ${file}`,
      cleanMessage(messageOf(reason))
    );
    return null;
  }
  return showPlan(
    waitPlan(client, async () => task),
    {
      pending: `Planning '${name}' from ${file}…`,
      ready: `Plan of '${name}' ready.`,
      failed: `Could not plan '${name}'`,
      nothing: `${file} names no package to install.`,
      title: `Create '${name}' from ${file}`,
      apply: 'Create'
    }
  );
}

async function showPlan(
  asked: Promise<IPackagesPlan>,
  words: IPlanWords
): Promise<boolean | null> {
  let plan: IPackagesPlan;
  try {
    Notification.promise(asked, {
      pending: { message: words.pending, options: {} },
      success: {
        message: () => words.ready,
        options: { autoClose: 1500 }
      },
      error: {
        message: (reason: unknown) =>
          `${words.failed}: ${cleanMessage(messageOf(reason))}`,
        options: { autoClose: 10000 }
      }
    });
    plan = await asked;
  } catch {
    return null;
  }
  if (plan.changes.length === 0) {
    Notification.info(words.nothing, { autoClose: 4000 });
    return false;
  }
  const result = await showDialog({
    title: words.title,
    body: new PlanBody(plan),
    buttons: [
      Dialog.cancelButton({ label: 'Back out' }),
      Dialog.okButton({ label: words.apply })
    ]
  });
  return result.button.accept && result.value === true;
}
