/**
 * The dialogs of environment commands run without a row: which environment
 * (a picker, for the palette), and why sharing cannot publish on this server.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { pickOne } from '../../components/dialogs/pick';
import { h } from '../../components/form';
import { EnvironmentActions } from '../actions';
import { notifyError } from '../notify';

/** The server option that turns sharing on (jupyter_gpu_env/options.py). */
export const SHARING_OPTION = 'c.GpuEnvApp.shared_env_dirs';

/** Why "Share with team" cannot publish here, and how an admin turns it on. */
export async function explainSharingOff(): Promise<void> {
  const body = h(
    'div',
    { class: 'jp-GpuEnv-confirm', 'data-testid': 'gpu-env-sharing-off' },
    h(
      'p',
      {},
      'Sharing environments with your team is off on this server: no ' +
        'shared folder is set up.'
    ),
    h(
      'p',
      {},
      'An administrator turns it on by naming a folder the team can write ' +
        "to in the server's configuration (group-owned, chmod 3775), then " +
        'restarting the server:'
    ),
    h(
      'pre',
      { class: 'jp-GpuEnv-code' },
      `${SHARING_OPTION} = ["/shared/team-envs"]`
    ),
    h(
      'p',
      {},
      'Until then, a teammate can clone your environment from its ' +
        'folder if they may read it, or create one from its exported file.'
    )
  );
  await showDialog({
    title: 'Sharing is off on this server',
    body: new Widget({ node: body }),
    buttons: [Dialog.okButton({ label: 'Close' })]
  });
}

/** Ask which listed environment; null when there is none or the user cancels. */
export async function chooseEnvironment(
  actions: EnvironmentActions,
  title: string,
  options: { okLabel: string; own?: boolean }
): Promise<string | null> {
  await actions.model.load(); // fresh names, even with the panel closed
  const error = actions.model.environmentsError;
  if (error) {
    notifyError('Could not list the environments', error);
    return null;
  }
  const names = options.own
    ? (actions.model.environments ?? [])
        .filter(env => env.kind === 'own')
        .map(env => env.name)
    : actions.model.names;
  if (names.length === 0) {
    Notification.warning(
      options.own
        ? 'You have no environment of your own yet: clone one first.'
        : 'There is no environment yet.'
    );
    return null;
  }
  return pickOne({
    title,
    label: 'Environment',
    items: names.map(name => ({ id: name, label: name })),
    okLabel: options.okLabel,
    testId: 'gpu-env-pick-environment'
  });
}
