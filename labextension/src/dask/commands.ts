/**
 * The Dask commands, called with `{ cluster: id }` by each row's button and
 * "⋯" menu; from the palette ("Dask: new cluster…", "Dask: scale…", "Dask:
 * open dashboard…", "Dask: insert client…", "Dask: shut down…") without
 * it, they ask which cluster.
 */
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import type { IDaskCluster } from '../api/types';
import { MenuEntry, SEPARATOR, rowMenu } from '../components/menu-button';
import { daskIcon } from '../components/icons';
import { text } from '../environments/commands';
import { DaskActions } from './actions';
import { DaskCommandIDs } from './command-ids';
import { isLive } from './format';

/** The "⋯" menu of a cluster's row. */
export function clusterMenu(id: string): MenuEntry[] {
  return rowMenu({ cluster: id }, [
    DaskCommandIDs.scale,
    DaskCommandIDs.dashboard,
    DaskCommandIDs.insertClient,
    SEPARATOR,
    DaskCommandIDs.shutdown
  ]);
}

export function registerDaskCommands(options: {
  commands: CommandRegistry;
  actions: DaskActions;
  palette: ICommandPalette | null;
  category: string;
}): void {
  const { commands, actions } = options;
  const clusterOf = (
    args: ReadonlyPartialJSONObject
  ): IDaskCluster | undefined =>
    actions.model.find(text(args, 'cluster') ?? '');
  const given = (args: ReadonlyPartialJSONObject): boolean =>
    text(args, 'cluster') !== undefined;
  /**
   * Run `action` on the cluster the command was called with; without one
   * (the palette), on the one chosen among those that `fits`.
   */
  const onCluster =
    (
      action: (cluster: IDaskCluster) => Promise<void> | void,
      title: string,
      fits?: (cluster: IDaskCluster) => boolean
    ) =>
    async (args: ReadonlyPartialJSONObject): Promise<void> => {
      const cluster = given(args)
        ? clusterOf(args)
        : await actions.choose(title, fits);
      if (cluster) {
        await action(cluster);
      } else if (given(args)) {
        Notification.warning(
          `No Dask cluster '${text(args, 'cluster')}' is listed.`
        );
      }
    };
  /** With a cluster given: whether it is live and `ready`. */
  const enabled =
    (ready: (cluster: IDaskCluster) => boolean = () => true) =>
    (args: ReadonlyPartialJSONObject): boolean => {
      if (!given(args)) {
        return true;
      }
      const cluster = clusterOf(args);
      return !!cluster && isLive(cluster) && ready(cluster);
    };
  const running = (cluster: IDaskCluster): boolean =>
    cluster.state === 'running';

  commands.addCommand(DaskCommandIDs.create, {
    label: args => (args['isPalette'] ? 'Dask: new cluster…' : 'New cluster…'),
    caption:
      'Start a Dask scheduler and its workers on a batch backend, in the ' +
      'notebook’s environment',
    icon: args => (args['isPalette'] ? undefined : daskIcon),
    execute: () => actions.create()
  });
  commands.addCommand(DaskCommandIDs.dashboard, {
    label: args =>
      args['isPalette'] ? 'Dask: open dashboard…' : 'Open dashboard',
    caption: 'The cluster’s dashboard in a tab',
    isEnabled: enabled(c => !!c.dashboard),
    execute: onCluster(
      c => actions.openDashboard(c),
      'Open a dashboard',
      running
    )
  });
  commands.addCommand(DaskCommandIDs.scale, {
    label: args => (args['isPalette'] ? 'Dask: scale…' : 'Scale…'),
    caption: 'Change the number of workers, or make it adaptive',
    isEnabled: enabled(),
    execute: onCluster(c => actions.scale(c), 'Scale a cluster')
  });
  commands.addCommand(DaskCommandIDs.insertClient, {
    label: args =>
      args['isPalette']
        ? 'Dask: insert client…'
        : 'Insert client into notebook',
    caption:
      'Add a cell that connects a dask.distributed Client to the cluster, ' +
      'at the top of the notebook',
    isEnabled: args =>
      actions.notebook !== null && enabled(c => !!c.client_code)(args),
    execute: onCluster(
      c => actions.insertClient(c),
      'Insert a client into the notebook',
      c => running(c) && !!c.client_code
    )
  });
  commands.addCommand(DaskCommandIDs.shutdown, {
    label: args => (args['isPalette'] ? 'Dask: shut down…' : 'Shut down…'),
    caption: 'Stop the scheduler and every worker, pending ones included',
    isEnabled: enabled(),
    execute: onCluster(c => actions.shutdown(c), 'Shut down a cluster')
  });
  for (const command of [
    DaskCommandIDs.create,
    DaskCommandIDs.scale,
    DaskCommandIDs.dashboard,
    DaskCommandIDs.insertClient,
    DaskCommandIDs.shutdown
  ]) {
    options.palette?.addItem({
      command,
      category: options.category,
      args: { isPalette: true }
    });
  }
}
