/**
 * The "Notifications…" command (in the palette, and behind the Jobs
 * section's button) and the browser notifications raised when a job or a
 * sweep ends while the Lab's tab is hidden.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IStateDB } from '@jupyterlab/statedb';

import { JobCommandIDs } from '../jobs/command-ids';
import { JobsModel } from '../jobs/model';
import { BrowserNotices } from './browser';
import { NotificationsClient } from './client';
import { editNotifications } from './dialog';

export function registerNotifications(
  app: JupyterFrontEnd,
  options: {
    model: JobsModel;
    state: IStateDB | null;
    palette: ICommandPalette | null;
    category: string;
    /** Whether the Lab tells of job ends at all (the `notifyOnEnd` setting). */
    enabled: () => boolean;
  }
): BrowserNotices {
  const client = new NotificationsClient(app.serviceManager.serverSettings);
  const browser = new BrowserNotices(options.state);
  app.commands.addCommand(JobCommandIDs.notificationSettings, {
    label: args =>
      args['isPalette'] ? 'Job notifications…' : 'Notifications…',
    caption:
      'Where word goes when a job, a sweep or a scheduled run ends: ' +
      'e-mail, a webhook (Slack, Mattermost), the browser',
    execute: () => editNotifications(client, browser)
  });
  options.palette?.addItem({
    command: JobCommandIDs.notificationSettings,
    category: options.category,
    args: { isPalette: true }
  });
  options.model.ended.connect((_, job) => {
    if (options.enabled()) {
      browser.jobEnded(job);
    }
  });
  options.model.sweepEnded.connect((_, sweep) => {
    if (options.enabled()) {
      browser.sweepEnded(sweep);
    }
  });
  return browser;
}
