/**
 * The "Jobs" section: the week's usage (GPU-hours allocated and used, the
 * last weeks as bars), then the jobs and sweeps newest first, each job with
 * its state, elapsed time, progress, GPU use and actions; a sweep is one
 * row standing for its runs, a pipeline one for its nodes. A button
 * opens the jobs and sweeps in the Jobs view, a table in the main area.
 */
import { Button, tableRowsIcon } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import React from 'react';

import { useNow, useSignals } from '../components/hooks';
import { ListingStatus } from '../components/listing';
import { SectionWidget } from '../sidebar/section-widget';
import { CollapsibleSection } from '../sidebar/collapsible';
import { jobsIcon } from '../components/icons';
import { JobActions } from './actions';
import { JobCommandIDs } from './command-ids';
import { sendToBatchIcon } from '../components/icons';
import { isActive } from './format';
import { SweepRow } from './sweeps/row';
import { JobsModel } from './model';
import { JobRow } from './row';
import { IJobsRegistry } from './tokens';
import { UsagePanel } from './usage/chart';

function Empty(): JSX.Element {
  return (
    <div className="jp-GpuEnv-empty" data-testid="gpu-env-jobs-empty">
      <jobsIcon.react tag="span" className="jp-GpuEnv-icon" />
      <p>
        No jobs yet. Send a notebook to run in the background with the{' '}
        <sendToBatchIcon.react
          tag="span"
          className="jp-GpuEnv-inlineIcon"
          title="Send to batch"
        />{' '}
        button of its toolbar, or “Send notebook to batch…” in the command
        palette.
      </p>
    </div>
  );
}

export function JobsView(props: {
  actions: JobActions;
  highlighted: string | null;
  /** The groups above the list and the pipelines' rows, from other plugins. */
  registry: IJobsRegistry;
}): JSX.Element {
  const { actions, highlighted, registry } = props;
  const { model } = actions;
  useSignals([model.changed, registry.changed]);
  const PipelineRow = registry.pipelines?.rows.row;
  const jobs = model.jobs;
  const entries = model.entries;
  const now = useNow(
    (jobs ?? []).some(isActive) ||
      (entries ?? []).some(
        entry => entry.kind === 'sweep' && model.isExpanded(entry.id)
      )
  );
  const more = model.more;
  const error = model.error;
  return (
    <div className="jp-GpuEnv-sectionBody" data-testid="gpu-env-jobs">
      {model.usage && (
        <UsagePanel
          usage={model.usage}
          weeks={model.weeks}
          client={model.client}
        />
      )}
      <Button
        small
        minimal
        className="jp-GpuEnv-openJobsView"
        data-testid="gpu-env-open-jobs-view"
        title="Every job and sweep in a table in the main area: sort, filter, act"
        onClick={() => void actions.commands.execute(JobCommandIDs.openView)}
      >
        <tableRowsIcon.react tag="span" className="jp-GpuEnv-icon" />
        Open the Jobs table
      </Button>
      <Button
        small
        minimal
        className="jp-GpuEnv-openJobsView"
        data-testid="gpu-env-notification-settings"
        title="Where word goes when a job, a sweep or a scheduled run ends: e-mail, a webhook, the browser"
        onClick={() =>
          void actions.commands.execute(JobCommandIDs.notificationSettings)
        }
      >
        Notifications…
      </Button>
      {registry.groups.map(group => (
        <group.component key={group.id} now={now} highlighted={highlighted} />
      ))}
      <ListingStatus what="jobs" error={error} pending={jobs === null} />
      {entries === null ? null : entries.length === 0 ? (
        <Empty />
      ) : (
        <ul className="jp-GpuEnv-list" data-testid="gpu-env-job-list">
          {entries.map(entry =>
            entry.kind === 'job' ? (
              <JobRow
                key={entry.job.id}
                job={entry.job}
                actions={actions}
                now={now}
                busy={model.isBusy(entry.job.id)}
                highlighted={entry.job.id === highlighted}
              />
            ) : entry.kind === 'pipeline' ? (
              PipelineRow && (
                <PipelineRow
                  key={`pipeline-${entry.id}`}
                  pipeline={entry.pipeline}
                  commands={actions.commands}
                  highlighted={entry.id === highlighted}
                />
              )
            ) : (
              <SweepRow
                key={`sweep-${entry.id}`}
                entry={entry}
                actions={actions}
                now={now}
                highlighted={entry.id === highlighted}
              />
            )
          )}
        </ul>
      )}
      {jobs !== null && more > 0 && (
        <Button small minimal onClick={() => void model.showMore()}>
          Show older jobs ({more} more)
        </Button>
      )}
    </div>
  );
}

/** The section widget; the list is asked again whenever it is shown. */
export class JobsSection extends SectionWidget {
  constructor(options: JobsSection.IOptions) {
    super('jobs', 'Jobs');
    this._actions = new JobActions(options.model, options.commands);
    options.model.viewed = () => this.isVisible;
    this._registry = options.registry;
    // A group added later is told too.
    const attach = (): void =>
      this._registry.groups.forEach(group =>
        group.viewed(() => this.isVisible)
      );
    attach();
    this._registry.changed.connect(attach);
    options.model.revealRequested.connect(this._onReveal, this);
  }

  protected onShown(): void {
    void this._actions.model.refresh();
    for (const group of this._registry.groups) {
      void group.refresh().catch(() => undefined);
    }
  }

  protected render(): JSX.Element {
    return (
      <JobsView
        actions={this._actions}
        highlighted={this._highlight}
        registry={this._registry}
      />
    );
  }

  private _onReveal(_: JobsModel, id: string | null): void {
    const parent = this.parent;
    if (parent instanceof CollapsibleSection && !parent.expanded) {
      parent.toggle();
    }
    if (id === null) {
      parent?.node.scrollIntoView({ block: 'start' });
    }
    this._highlight = id;
    this.update();
    window.clearTimeout(this._timer);
    this._timer = window.setTimeout(() => {
      this._highlight = null;
      this.update();
    }, 3000);
  }

  private _actions: JobActions;
  private _registry: IJobsRegistry;
  private _highlight: string | null = null;
  private _timer = 0;
}

export namespace JobsSection {
  export interface IOptions {
    model: JobsModel;
    commands: CommandRegistry;
    /** What other plugins add: the groups above the jobs (schedules), the pipelines' rows. */
    registry: IJobsRegistry;
  }
}
