/**
 * Deleting what running kernels use: the server refuses (409, `kernels_running`) and names them; the
 * user chooses to shut them down and go on, or to keep them.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Session, SessionAPI } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { ApiError } from '../api/request';
import { h } from './form';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function listed(notebooks: string[], count: number): HTMLElement {
  const items = notebooks.length ? notebooks : [`${plural(count, 'kernel')}`];
  return h('ul', {}, ...items.map(name => h('li', {}, name)));
}

/**
 * Run `attempt(false)`; if running kernels are in its way, ask whether to shut
 * them down, and if so run `attempt(true)`. Null when the user keeps them.
 */
export async function withKernelsShutDown<T>(
  what: string,
  attempt: (shutdownKernels: boolean) => Promise<T>
): Promise<T | null> {
  try {
    return await attempt(false);
  } catch (error) {
    if (
      !(error instanceof ApiError) ||
      error.status !== 409 ||
      error.reason !== 'kernels_running'
    ) {
      throw error;
    }
    const kernels = error.details ?? [];
    const notebooks = kernels
      .map(k => (typeof k.notebook_path === 'string' ? k.notebook_path : ''))
      .filter(Boolean);
    const count = kernels.length || 1;
    const body = h(
      'div',
      { class: 'jp-GpuEnv-confirm', 'data-testid': 'gpu-env-kernels-in-use' },
      h('p', {}, `${plural(count, 'kernel')} of this server run in ${what}:`),
      listed(notebooks, count),
      h(
        'p',
        {},
        'Shutting them down loses what they hold in memory; their notebooks stay as saved.'
      )
    );
    const answer = await showDialog({
      title: `${plural(count, 'kernel')} still running`,
      body: new Widget({ node: body }),
      buttons: [
        Dialog.cancelButton({ label: 'Keep them' }),
        Dialog.warnButton({
          label: `Shut down ${plural(count, 'kernel')} and delete`
        })
      ]
    });
    if (!answer.button.accept) {
      return null;
    }
    return await attempt(true);
  }
}

/**
 * Before removing the kernelspec `kernelName`: when running kernels use it,
 * ask (they keep running, but cannot be restarted with it). True to go on.
 */
export async function confirmKernelspecRemoval(
  kernelName: string,
  label: string,
  sessions: Session.IManager | null
): Promise<boolean> {
  // Asked now: the session manager's own list is polled, and stands by in a hidden tab.
  const running = sessions
    ? await SessionAPI.listRunning(sessions.serverSettings).catch(() => [])
    : [];
  const using = running.filter(s => s.kernel?.name === kernelName);
  if (using.length === 0) {
    return true;
  }
  const body = h(
    'div',
    { class: 'jp-GpuEnv-confirm', 'data-testid': 'gpu-env-kernelspec-in-use' },
    h('p', {}, `${plural(using.length, 'notebook')} use '${label}' now:`),
    listed(
      using.map(s => s.path),
      using.length
    ),
    h(
      'p',
      {},
      'Their kernels keep running, but once the kernel is removed they cannot be ' +
        'restarted with it, and the notebooks will ask for another kernel.'
    )
  );
  const answer = await showDialog({
    title: `Remove the kernel '${label}'?`,
    body: new Widget({ node: body }),
    buttons: [
      Dialog.cancelButton(),
      Dialog.warnButton({ label: 'Remove the kernel' })
    ]
  });
  return answer.button.accept;
}
