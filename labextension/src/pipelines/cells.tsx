/**
 * A pipeline in the Jobs view: one row, like a sweep's (its toggle, its
 * facts, "N of M nodes", Open graph and Cancel while it is active), that
 * expands to its nodes, one step in, each with its state and a way to its
 * job's log or its sweep's results. Every action goes through the
 * pipelines' and jobs' commands, as in the sidebar and the graph.
 */
import {
  ToolbarButtonComponent,
  tableRowsIcon,
  textEditorIcon
} from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import React from 'react';

import type { IPipeline, IPipelineNode } from '../api/types';
import { JobCommandIDs } from '../jobs/command-ids';
import { formatTime } from '../jobs/format';
import { PipelineActionButtons } from './row';
import {
  describeKind,
  describeNodeCounts,
  isPipelineActive,
  nodeProgress,
  nodesEnded
} from './format';
import { FactCells, GroupTableRow } from '../jobs/view/cells';
import { IRowFacts } from '../jobs/view/rows';
import { IPipelineRows } from '../jobs/tokens';

/** A pipeline's row: its toggle, its facts, its nodes ended, its actions. */
export function PipelineTableRow(props: {
  pipeline: IPipeline;
  facts: IRowFacts;
  expanded: boolean;
  onToggle: () => void;
  commands: CommandRegistry;
  now: number;
}): JSX.Element {
  const { pipeline, facts, expanded, commands, now } = props;
  const { id, name } = pipeline;
  const { ended, total } = nodesEnded(pipeline);
  const counts = describeNodeCounts(pipeline.counts);
  return (
    <GroupTableRow
      kind="pipeline"
      id={id}
      name={name}
      state={pipeline.state}
      expanded={expanded}
      onToggle={props.onToggle}
      parts="nodes"
      title={[
        `Pipeline of ${total} ${total === 1 ? 'node' : 'nodes'}`,
        pipeline.file_path ? `From ${pipeline.file_path}` : null,
        counts || null,
        `Submitted ${formatTime(pipeline.created_at)}`
      ]
        .filter(Boolean)
        .join('\n')}
      count={
        <span
          className="jp-GpuEnv-note"
          data-testid="gpu-env-jobs-pipeline-ended"
        >
          ({ended} of {total} {total === 1 ? 'node' : 'nodes'})
        </span>
      }
      facts={facts}
      now={now}
    >
      <PipelineActionButtons
        id={id}
        name={name}
        active={isPipelineActive(pipeline.state)}
        commands={commands}
      />
    </GroupTableRow>
  );
}

/** A node's row, one step in under its pipeline. */
export function NodeTableRow(props: {
  pipelineId: string;
  node: IPipelineNode;
  facts: IRowFacts;
  commands: CommandRegistry;
  now: number;
}): JSX.Element {
  const { pipelineId, node, facts, commands, now } = props;
  const progress = nodeProgress(node);
  return (
    <tr
      data-testid="gpu-env-jobs-node"
      data-kind="node"
      data-pipeline={pipelineId}
      data-node={node.id}
      data-state={node.state}
    >
      <td className="jp-GpuEnv-jobsToggle" />
      <td
        data-column="name"
        className="jp-GpuEnv-jobsName"
        data-run="true"
        title={[
          describeKind(node),
          node.after.length ? `After ${node.after.join(', ')}` : null,
          node.attempts > 1 ? `Sent ${node.attempts} times` : null,
          node.message || null
        ]
          .filter(Boolean)
          .join('\n')}
      >
        {node.name}
        {progress && (
          <>
            {' '}
            <span className="jp-GpuEnv-note">({progress.text})</span>
          </>
        )}
      </td>
      <FactCells facts={facts} now={now} />
      <td className="jp-GpuEnv-jobsActions">
        <div className="jp-GpuEnv-rowActions" role="toolbar">
          {node.kind === 'sweep' && node.group_id !== null && (
            <ToolbarButtonComponent
              icon={tableRowsIcon}
              tooltip="Show the results of this node's runs"
              aria-label={`Results of ${node.name}`}
              dataset={{ action: 'results' }}
              onClick={() =>
                void commands.execute(JobCommandIDs.sweepResults, {
                  sweep: node.group_id
                })
              }
            />
          )}
          {node.kind !== 'sweep' && node.job_id !== null && (
            <ToolbarButtonComponent
              icon={textEditorIcon}
              tooltip="Show the log of this node's job"
              aria-label={`Log of ${node.name}`}
              dataset={{ action: 'log' }}
              onClick={() =>
                void commands.execute(JobCommandIDs.showLog, {
                  id: node.job_id
                })
              }
            />
          )}
        </div>
      </td>
    </tr>
  );
}

/** A pipeline's row and, expanded, its (listed) nodes. */
export function PipelineRows(props: IPipelineRows.ICellsProps): JSX.Element {
  const { pipeline, nodes, expanded, commands, now } = props;
  return (
    <>
      <PipelineTableRow
        pipeline={pipeline}
        facts={props.facts}
        expanded={expanded}
        onToggle={props.onToggle}
        commands={commands}
        now={now}
      />
      {expanded &&
        (nodes ?? []).map(({ node, facts }) => (
          <NodeTableRow
            key={node.id}
            pipelineId={pipeline.id}
            node={node}
            facts={facts}
            commands={commands}
            now={now}
          />
        ))}
    </>
  );
}
