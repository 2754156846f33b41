/**
 * Notifications when a task ends: what it made, or the server's reason.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { h } from '../components/form';
import {
  ICreateResult,
  IImage,
  IPackagesResult,
  IPublishResult,
  ITask,
  IUndoResult
} from '../api/types';
import {
  cleanMessage,
  describeImageSize,
  formatDuration,
  plural
} from './format';
import { asApiError } from '../api/request';
import { describeFailure } from './packages/plan-lines';
import {
  GPU_CHECK_KIND,
  checkedEnvironment,
  describeGpuCheck,
  isGpuCheck,
  showGpuCheck
} from './gpucheck';

/** How many package names a notification lists before "and N more". */
const LISTED = 5;

/** An error notification with the server's own message. */
export function notifyError(title: string, reason: unknown): void {
  const message = cleanMessage(asApiError(reason).message);
  Notification.error(`${title}: ${message}`, { autoClose: 10000 });
}

/** Tell the user how `task` ended. */
export function notifyTaskEnd(task: ITask): void {
  if (task.state === 'failed') {
    // The first line in the toast; the whole message and the log one click
    // away, never cut off mid-message.
    const words = describeFailure(
      cleanMessage(task.message),
      task.reason ?? null,
      task.log_tail
    );
    Notification.error(`${task.title} failed: ${words.summary}`, {
      autoClose: false,
      actions: words.more
        ? [
            {
              label: 'Details',
              callback: () => void showFailure(task, words.detail),
              displayType: 'link'
            }
          ]
        : undefined
    });
  } else if (task.state === 'cancelled') {
    Notification.info(`${task.title}: ${task.message}`, { autoClose: 5000 });
  } else if (task.state === 'succeeded') {
    const { message, actions, warning } = successOf(task);
    if (warning) {
      // A finding the user asked for and must act on: it stays until closed.
      Notification.warning(message, { autoClose: false, actions });
    } else {
      Notification.success(message, { autoClose: 6000, actions });
    }
  }
}

/** One line saying how a finished task ended, for its row. */
export function taskSummary(task: ITask): string {
  return task.state === 'succeeded'
    ? successOf(task).message
    : cleanMessage(task.message);
}

function successOf(task: ITask): {
  message: string;
  actions?: Notification.IAction[];
  /** A task that did its work and found something wrong (no usable GPU). */
  warning?: boolean;
} {
  if (task.kind === GPU_CHECK_KIND && isGpuCheck(task.result)) {
    const check = task.result;
    const environment = checkedEnvironment(task);
    return {
      message: describeGpuCheck(environment, check),
      warning: !check.ok,
      actions: [
        {
          label: 'Details',
          callback: () => void showGpuCheck(environment, check),
          displayType: 'link'
        }
      ]
    };
  }
  if (task.kind === 'pack' && isImage(task.result)) {
    const image = task.result;
    return {
      message:
        `Packed '${image.environment}' in ` +
        `${formatDuration(image.pack_seconds)}: ${describeImageSize(image)}.`
    };
  }
  if (task.kind === 'install' && isPackagesResult(task.result)) {
    const result = task.result;
    const { installed, removed } = result.report;
    const parts = [
      installed.length ? `installed ${listed(installed)}` : '',
      removed.length ? `removed ${listed(removed)}` : ''
    ].filter(Boolean);
    return {
      message:
        `Changed '${result.environment.name}': ` +
        (parts.join('; ') || 'nothing to do') +
        '.',
      actions: [
        {
          label: 'Details',
          callback: () => void showReport(result),
          displayType: 'link'
        }
      ]
    };
  }
  if (task.kind === 'create' && isCreateResult(task.result)) {
    const result = task.result;
    const { from_file, installed, ignored, seconds } = result.report;
    return {
      message:
        `Created '${result.environment.name}' from ${from_file} in ` +
        `${formatDuration(seconds)}: ${plural(installed.length, 'package')}` +
        (ignored.length
          ? `; ${ignored.length === 1 ? 'one entry' : `${ignored.length} entries`} ` +
            'not applied (see Details).'
          : '.'),
      actions: [
        {
          label: 'Details',
          callback: () => void showCreateReport(result),
          displayType: 'link'
        }
      ]
    };
  }
  if (task.kind === 'publish' && isPublishResult(task.result)) {
    const env = task.result.environment;
    return {
      message:
        `Shared '${env.name}' with the team` +
        (env.description ? `: ${env.description}` : '.')
    };
  }
  if (task.kind === 'undo' && isUndoResult(task.result)) {
    const { done, environment } = task.result;
    return { message: `${done} in '${environment.name}'.` };
  }
  return { message: task.message || `${task.title}: done.` };
}

function isUndoResult(value: unknown): value is IUndoResult {
  return hasKeys(value, 'done', 'environment');
}

function listed(specs: string[]): string {
  const names = specs.map(nameOf);
  const shown = names.slice(0, LISTED).join(', ');
  const more = names.length - LISTED;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/** `ipykernel-7.4.0-pyh_local_0` → `ipykernel`. */
function nameOf(spec: string): string {
  const parts = spec.split('-');
  return parts.length >= 3 ? parts.slice(0, -2).join('-') : spec;
}

/** A report's list: its title and count, the items, or "none". */
function reportList(
  title: string,
  items: string[],
  testid?: string
): HTMLElement {
  return h(
    'div',
    { class: 'jp-GpuEnv-report', 'data-testid': testid },
    h('div', { class: 'jp-GpuEnv-fieldLabel' }, `${title} (${items.length})`),
    items.length
      ? h(
          'ul',
          { class: 'jp-GpuEnv-reportList' },
          ...items.map(item => h('li', {}, item))
        )
      : h('div', { class: 'jp-GpuEnv-fieldHint' }, 'none')
  );
}

/** A dialog with every package a change installed and removed. */
async function showReport(result: IPackagesResult): Promise<void> {
  const { installed, removed, seconds } = result.report;
  const body = h(
    'div',
    { 'data-testid': 'gpu-env-packages-report' },
    reportList('Installed or changed', installed),
    reportList('Removed', removed),
    h(
      'div',
      { class: 'jp-GpuEnv-fieldHint' },
      `Took ${formatDuration(seconds)}.`
    )
  );
  await showDialog({
    title: `Package changes in '${result.environment.name}'`,
    body: new Widget({ node: body }),
    buttons: [Dialog.okButton({ label: 'Close' })]
  });
}

/** A failed task's whole message and the last lines of its log. */
async function showFailure(task: ITask, detail: string): Promise<void> {
  await showDialog({
    title: `${task.title} failed`,
    body: new Widget({
      node: h(
        'pre',
        { class: 'jp-GpuEnv-taskOutput', 'data-testid': 'gpu-env-task-output' },
        detail
      )
    }),
    buttons: [Dialog.okButton({ label: 'Close' })]
  });
}

/** What creating from a file installed, and what of the file it did not apply. */
async function showCreateReport(result: ICreateResult): Promise<void> {
  const { from_file, file_kind, installed, ignored, seconds } = result.report;
  const body = h(
    'div',
    { 'data-testid': 'gpu-env-create-report' },
    h('p', {}, `From ${from_file} (read as ${file_kind}).`),
    reportList('Installed', installed, 'gpu-env-create-installed'),
    ignored.length
      ? reportList('Not applied', ignored, 'gpu-env-create-ignored')
      : null,
    h(
      'div',
      { class: 'jp-GpuEnv-fieldHint' },
      `Took ${formatDuration(seconds)}.`
    )
  );
  await showDialog({
    title: `'${result.environment.name}' created`,
    body: new Widget({ node: body }),
    buttons: [Dialog.okButton({ label: 'Close' })]
  });
}

/** Whether a task's result is an object with all of `keys`. */
function hasKeys(value: unknown, ...keys: string[]): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    keys.every(key => key in value)
  );
}

function isImage(value: unknown): value is IImage {
  return hasKeys(value, 'usage', 'size_bytes');
}

function isPackagesResult(value: unknown): value is IPackagesResult {
  return hasKeys(value, 'report', 'environment');
}

function isCreateResult(value: unknown): value is ICreateResult {
  return (
    hasKeys(value, 'report', 'environment') &&
    hasKeys((value as ICreateResult).report, 'from_file', 'installed')
  );
}

function isPublishResult(value: unknown): value is IPublishResult {
  return hasKeys(value, 'environment');
}
