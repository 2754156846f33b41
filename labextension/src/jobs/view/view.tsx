/**
 * The Jobs view in the main area: every job, sweep and pipeline in one
 * full-width table (name, state, backend, queue place, started, duration,
 * GPU use, parameters, actions), sorted by a click on a header and filtered
 * by text and state; a sweep expands to its runs, a pipeline to its nodes. It follows the jobs model, which
 * polls (faster while this view or the sidebar's section is visible).
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import {
  Button,
  HTMLSelect,
  InputGroup,
  ReactWidget,
  ToolbarButton,
  refreshIcon
} from '@jupyterlab/ui-components';
import React, { useState } from 'react';

import { useNow, useSignals } from '../../components/hooks';
import { jobsIcon } from '../../components/icons';
import { ListingStatus } from '../../components/listing';
import {
  createMainAreaWidget,
  createStatusNode
} from '../../components/main-area';
import { DataTable, SortableHead } from '../../components/table';
import { JobActions } from '../actions';
import { isActive } from '../format';
import { MAX_RUNS_LISTED } from '../model';
import { JobTableRow, NoteRow, SweepTableRow } from './cells';
import { IJobsRegistry } from '../tokens';
import {
  ColumnKey,
  IFilter,
  ISort,
  NO_FILTER,
  TableRow,
  filterRows,
  nextSort,
  sortRows
} from './rows';
import { isEntryActive, tableRows } from './table';

const COLUMNS: [ColumnKey, string][] = [
  ['name', 'Name'],
  ['state', 'State'],
  ['backend', 'Backend'],
  ['queue', 'Queue place'],
  ['started', 'Started'],
  ['duration', 'Duration'],
  ['gpu', 'GPU use'],
  ['energy', 'Energy'],
  ['parameters', 'Parameters']
];
/** The toggle, the columns and the actions. */
const SPAN = COLUMNS.length + 2;

const STATES: [IFilter['state'], string][] = [
  ['all', 'Every state'],
  ['active', 'Queued or running'],
  ['queued', 'Queued'],
  ['running', 'Running'],
  ['succeeded', 'Succeeded'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled']
];

function Filters(props: {
  filter: IFilter;
  onChange: (filter: IFilter) => void;
  shown: number;
  total: number;
}): JSX.Element {
  const { filter, onChange } = props;
  const change = (part: Partial<IFilter>): void =>
    onChange({ ...filter, ...part });
  return (
    <div className="jp-GpuEnv-jobsFilters" role="search">
      <InputGroup
        type="search"
        rightIcon="ui-components:search"
        placeholder="Filter by name, notebook or parameter"
        aria-label="Filter the jobs by name, notebook or parameter"
        value={filter.text}
        data-testid="gpu-env-jobs-filter"
        onChange={event =>
          change({ text: (event.target as HTMLInputElement).value })
        }
      />
      <HTMLSelect
        aria-label="Show the jobs in this state"
        value={filter.state}
        data-testid="gpu-env-jobs-state-filter"
        onChange={event =>
          change({ state: event.target.value as IFilter['state'] })
        }
      >
        {STATES.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </HTMLSelect>
      <span className="jp-GpuEnv-note" data-testid="gpu-env-jobs-shown">
        {props.shown === props.total
          ? `${props.total} listed`
          : `${props.shown} of ${props.total} listed`}
      </span>
    </div>
  );
}

function Head(props: {
  sort: ISort | null;
  onSort: (key: ColumnKey) => void;
}): JSX.Element {
  const { sort, onSort } = props;
  return (
    <>
      <th className="jp-GpuEnv-jobsToggle">
        <span className="jp-GpuEnv-visuallyHidden">Runs</span>
      </th>
      {COLUMNS.map(([key, label]) => (
        <SortableHead
          key={key}
          column={key}
          label={label}
          title={`Sort by ${label.toLowerCase()}`}
          sorted={sort?.key === key ? sort.direction : null}
          onSort={() => onSort(key)}
        />
      ))}
      <th>
        <span className="jp-GpuEnv-visuallyHidden">Actions</span>
      </th>
    </>
  );
}

function Rows(props: {
  rows: TableRow[];
  actions: JobActions;
  now: number;
  onTogglePipeline: (id: string) => void;
  registry: IJobsRegistry;
}): JSX.Element {
  const { rows, actions, now } = props;
  const PipelineRows = props.registry.pipelines?.rows.cells;
  const { model } = actions;
  return (
    <>
      {rows.map(row => {
        if (row.kind === 'pipeline') {
          return (
            PipelineRows && (
              <PipelineRows
                key={`pipeline-${row.id}`}
                pipeline={row.pipeline}
                facts={row.facts}
                nodes={row.nodes}
                expanded={row.nodes !== null}
                onToggle={() => props.onTogglePipeline(row.id)}
                commands={actions.commands}
                now={now}
              />
            )
          );
        }
        if (row.kind === 'job') {
          return (
            <JobTableRow
              key={row.id}
              job={row.job}
              facts={row.facts}
              actions={actions}
              now={now}
            />
          );
        }
        const expanded = model.isExpanded(row.id, 'view');
        const size = row.sweep?.size ?? row.runs?.length ?? 0;
        const listed = model.runsOf(row.id);
        return (
          <React.Fragment key={`sweep-${row.id}`}>
            <SweepTableRow
              id={row.id}
              facts={row.facts}
              size={size}
              notebook={row.sweep?.notebook_path ?? null}
              expanded={expanded}
              actions={actions}
              now={now}
            />
            {expanded && listed === null && (
              <NoteRow columns={SPAN}>Looking for the runs…</NoteRow>
            )}
            {expanded &&
              (row.runs ?? []).map(run => (
                <JobTableRow
                  key={run.job.id}
                  job={run.job}
                  facts={run.facts}
                  actions={actions}
                  now={now}
                  run
                />
              ))}
            {expanded && listed !== null && size > listed.length && (
              <NoteRow columns={SPAN}>
                The first {Math.min(listed.length, MAX_RUNS_LISTED)} of {size}{' '}
                runs; every run is in the results.
              </NoteRow>
            )}
          </React.Fragment>
        );
      })}
    </>
  );
}

export function JobsTable(props: {
  actions: JobActions;
  registry: IJobsRegistry;
}): JSX.Element {
  const { actions, registry } = props;
  const { model } = actions;
  useSignals([model.changed, registry.changed]);
  const [filter, setFilter] = useState<IFilter>(NO_FILTER);
  const [sort, setSort] = useState<ISort | null>(null);
  // The pipelines whose nodes are listed (their nodes come with them).
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const togglePipeline = (id: string): void =>
    setExpanded(before => {
      const after = new Set(before);
      if (!after.delete(id)) {
        after.add(id);
      }
      return after;
    });
  const entries = model.entries;
  const now = useNow(
    (model.jobs ?? []).some(isActive) || (entries ?? []).some(isEntryActive)
  );
  const all = tableRows(model, now, expanded);
  const rows = sortRows(filterRows(all, filter), sort);
  return (
    <div className="jp-GpuEnv-jobsView" data-testid="gpu-env-jobs-view">
      <ListingStatus
        what="jobs"
        error={model.error}
        pending={entries === null}
      />
      <Filters
        filter={filter}
        onChange={setFilter}
        shown={rows.length}
        total={all.length}
      />
      {entries !== null && all.length === 0 ? (
        <p className="jp-GpuEnv-note" data-testid="gpu-env-jobs-view-empty">
          No jobs yet. Send a notebook to run in the background with “Send
          notebook to batch…” in its toolbar or the command palette.
        </p>
      ) : (
        <div className="jp-GpuEnv-jobsTableBox">
          <DataTable
            className="jp-GpuEnv-jobsTable"
            testId="gpu-env-jobs-table"
            head={
              <Head sort={sort} onSort={key => setSort(nextSort(sort, key))} />
            }
          >
            <Rows
              rows={rows}
              actions={actions}
              now={now}
              onTogglePipeline={togglePipeline}
              registry={registry}
            />
            {all.length > 0 && rows.length === 0 && (
              <NoteRow columns={SPAN}>
                No job, sweep or pipeline matches the filter.
              </NoteRow>
            )}
          </DataTable>
        </div>
      )}
      {model.jobs !== null && model.more > 0 && (
        <Button small minimal onClick={() => void model.showMore()}>
          Show older jobs ({model.more} more)
        </Button>
      )}
    </div>
  );
}

/** The view inside the main-area widget. */
export class JobsMainView extends ReactWidget {
  constructor(
    readonly actions: JobActions,
    readonly registry: IJobsRegistry
  ) {
    super();
    this.addClass('jp-GpuEnv-jobsMainView');
  }

  protected override onAfterShow(): void {
    void this.actions.model.refresh().catch(() => undefined);
  }

  protected render(): JSX.Element {
    return <JobsTable actions={this.actions} registry={this.registry} />;
  }
}

/**
 * The Jobs view's widget. While it is visible the model counts as viewed
 * (it polls every ~2 s while a job is active), as with the sidebar section.
 */
export function createJobsWidget(
  actions: JobActions,
  registry: IJobsRegistry
): MainAreaWidget<JobsMainView> {
  const { model } = actions;
  const content = new JobsMainView(actions, registry);
  const status = createStatusNode();
  const refresh = new ToolbarButton({
    icon: refreshIcon,
    tooltip: 'Ask the server for the jobs now',
    onClick: () => void model.refresh().catch(() => undefined)
  });
  const widget = createMainAreaWidget({
    content,
    id: 'jupyter-gpu-env-jobs-view',
    label: 'Jobs',
    caption: 'Every batch job, sweep and pipeline: sort, filter, act',
    icon: jobsIcon,
    items: [['refresh', refresh]],
    status
  });
  widget.addClass('jp-GpuEnv-jobsWidget');
  const viewedBefore = model.viewed;
  model.viewed = () => viewedBefore() || content.isVisible;
  const updateStatus = (): void => {
    const active = (model.entries ?? []).filter(isEntryActive).length;
    status.textContent = active
      ? `${active} queued or running: following ${active === 1 ? 'it' : 'them'}…`
      : 'Nothing queued or running.';
  };
  model.changed.connect(updateStatus);
  updateStatus();
  widget.disposed.connect(() => {
    model.viewed = viewedBefore;
    model.changed.disconnect(updateStatus);
  });
  return widget;
}
