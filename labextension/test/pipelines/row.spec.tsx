import { fireEvent, render, screen, within } from '@testing-library/react';
import React from 'react';

import type { IPipeline } from '../../src/api/types';
import { PipelineCommandIDs } from '../../src/pipelines/command-ids';
import { PipelineRow } from '../../src/pipelines/row';
import { recordingCommands } from '../fakes';
import { pipeline } from '../records';

function renderRow(record: IPipeline) {
  const { commands, calls } = recordingCommands([
    PipelineCommandIDs.open,
    PipelineCommandIDs.cancel
  ]);
  render(
    <ul>
      <PipelineRow pipeline={record} commands={commands} highlighted={false} />
    </ul>
  );
  const row = screen.getByTestId('gpu-env-pipeline');
  const button = (action: string) =>
    row.querySelector(`[data-action="${action}"]`) as HTMLElement | null;
  return { row, calls, button };
}

describe('PipelineRow', () => {
  it('shows the name, state, nodes ended and the counts in words', () => {
    const { row } = renderRow(pipeline());
    expect(row.dataset.id).toBe('p1');
    expect(row.dataset.nodes).toBe('3');
    expect(row.dataset.ended).toBe('1');
    expect(within(row).getByText('etl').className).toBe(
      'jp-GpuEnv-rowName jp-GpuEnv-jobName'
    );
    expect(within(row).getByTestId('gpu-env-job-state').textContent).toBe(
      'running'
    );
    expect(within(row).getByTestId('gpu-env-pipeline-ended').textContent).toBe(
      '1 of 3 nodes'
    );
    const bar = within(row).getByRole('progressbar', {
      name: 'Nodes of etl ended'
    });
    expect(bar.getAttribute('aria-valuenow')).toBe('1');
    expect(bar.getAttribute('aria-valuemax')).toBe('3');
    expect(within(row).getByText(/1 succeeded/)).toBeTruthy();
  });

  it('opens its graph and cancels it with its id while it is active', () => {
    const { button, calls } = renderRow(pipeline({ id: 'p4' }));
    expect(button('graph')?.textContent).toContain('Open graph');
    fireEvent.click(button('graph')!);
    fireEvent.click(button('cancel')!);
    expect(calls).toEqual([
      [PipelineCommandIDs.open, { id: 'p4' }],
      [PipelineCommandIDs.cancel, { id: 'p4' }]
    ]);
  });

  it('offers no cancel once it has ended', () => {
    const { row, button } = renderRow(
      pipeline({
        state: 'succeeded',
        nodes: [{ id: 'a', state: 'succeeded' }] as IPipeline['nodes']
      })
    );
    expect(button('graph')).not.toBeNull();
    expect(button('cancel')).toBeNull();
    expect(within(row).getByRole('progressbar').dataset.level).toBe('success');
  });
});
