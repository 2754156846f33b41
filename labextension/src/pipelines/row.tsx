/**
 * A pipeline in the Jobs section: one row for all its nodes, like a
 * sweep's: its name, state, the nodes ended of all, "Open graph" and
 * Cancel while it is active.
 */
import {
  ToolbarButtonComponent,
  stopIcon,
  treeViewIcon
} from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import React from 'react';

import { formatTime } from '../jobs/format';
import { StateBadge } from '../components/figures/badge';
import { EndedProgress } from '../jobs/row';
import { ListRow } from '../components/row';
import { IPipelineRows } from '../jobs/tokens';
import { PipelineCommandIDs } from './command-ids';
import { describeNodeCounts, isPipelineActive, nodesEnded } from './format';

/**
 * A pipeline's actions, shared with the Jobs view: "Open graph", and Cancel
 * while it is active; `labelled` shows the first one's words beside its icon.
 */
export function PipelineActionButtons(props: {
  id: string;
  name: string;
  active: boolean;
  commands: CommandRegistry;
  labelled?: boolean;
}): JSX.Element {
  const { id, name, active, commands, labelled } = props;
  return (
    <div className="jp-GpuEnv-rowActions" role="toolbar">
      <ToolbarButtonComponent
        icon={treeViewIcon}
        label={labelled ? 'Open graph' : undefined}
        tooltip="Open the pipeline's graph: its nodes and how they stand"
        aria-label={labelled ? undefined : `Open the graph of ${name}`}
        dataset={{ action: 'graph' }}
        onClick={() => void commands.execute(PipelineCommandIDs.open, { id })}
      />
      {active && (
        <ToolbarButtonComponent
          icon={stopIcon}
          tooltip="Cancel the pipeline: stop its running nodes, skip the rest"
          aria-label={`Cancel the pipeline ${name}`}
          dataset={{ action: 'cancel' }}
          onClick={() =>
            void commands.execute(PipelineCommandIDs.cancel, { id })
          }
        />
      )}
    </div>
  );
}

export function PipelineRow(props: IPipelineRows.IRowProps): JSX.Element {
  const { pipeline, commands, highlighted } = props;
  const { id, name, state } = pipeline;
  const { ended, total } = nodesEnded(pipeline);
  const active = isPipelineActive(state);
  const counts = describeNodeCounts(pipeline.counts);
  const source = pipeline.file_path ? `From ${pipeline.file_path}\n` : '';
  return (
    <ListRow
      kind="pipeline"
      highlighted={highlighted}
      data={{ id, state, name, nodes: total, ended }}
    >
      <div className="jp-GpuEnv-rowHeader">
        <span
          className="jp-GpuEnv-rowName jp-GpuEnv-jobName"
          title={`Pipeline of ${total} nodes\n${source}Submitted ${formatTime(pipeline.created_at)}`}
        >
          {name}
        </span>
      </div>
      <div className="jp-GpuEnv-jobStatus">
        <StateBadge state={state} />
        <span className="jp-GpuEnv-note" title={counts}>
          {counts}
        </span>
        <PipelineActionButtons
          id={id}
          name={name}
          active={active}
          commands={commands}
          labelled
        />
      </div>
      <EndedProgress
        ended={ended}
        total={total}
        state={state}
        active={active}
        name={name}
        unit="node"
        testId="gpu-env-pipeline"
      />
    </ListRow>
  );
}
