/**
 * The "Open Jobs" command: the Jobs view in the main area, one widget
 * however often it is asked (brought to the front when it is open), opened
 * as a tab of its own and reopened after a reload; in the palette, and
 * behind the button of the sidebar's Jobs section.
 */
import { ILayoutRestorer, JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette, MainAreaWidget } from '@jupyterlab/apputils';

import { jobsIcon } from '../../components/icons';
import { restorableViews } from '../../components/main-area';
import { JobActions } from '../actions';
import { JobCommandIDs } from '../command-ids';
import { IJobsRegistry } from '../tokens';
import { createJobsWidget, JobsMainView } from './view';

export function registerJobsView(
  app: JupyterFrontEnd,
  options: {
    actions: JobActions;
    /** The pipelines' rows, from the pipelines plugin. */
    registry: IJobsRegistry;
    palette: ICommandPalette | null;
    restorer: ILayoutRestorer | null;
    category: string;
  }
): void {
  const { commands, shell } = app;
  let widget: MainAreaWidget<JobsMainView> | null = null;
  const tracker = restorableViews<MainAreaWidget<JobsMainView>>({
    restorer: options.restorer,
    namespace: 'gpu-env-jobs',
    command: JobCommandIDs.openView,
    args: () => ({}),
    name: () => 'jobs'
  });
  commands.addCommand(JobCommandIDs.openView, {
    label: 'Open Jobs',
    caption:
      'Every batch job and sweep in a table in the main area: sort, ' +
      'filter, follow and act on them',
    icon: args => (args['isPalette'] ? undefined : jobsIcon),
    execute: async () => {
      if (!widget || widget.isDisposed) {
        widget = createJobsWidget(options.actions, options.registry);
        shell.add(widget, 'main');
        await tracker.add(widget);
      }
      shell.activateById(widget.id);
      return widget;
    }
  });
  options.palette?.addItem({
    command: JobCommandIDs.openView,
    category: options.category
  });
}
