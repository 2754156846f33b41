/**
 * Notebook pipelines against the real server (local backend, papermill):
 * a diamond run from its `*.pipeline.yaml` in the file browser, its graph
 * (every node and edge, states, "Re-run from here"), the pipeline as one
 * row of the Jobs section and of the Jobs view (its nodes, filters, Open
 * graph), and "Run after…" in the send dialog. At JupyterLab's default
 * sidebar width.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';

import type { IJob, IPipelineList } from '../../labextension/src/api/types';
import {
  PANEL_ID,
  apiGet,
  dialog,
  notebook,
  openNotebook,
  runFromPalette,
  screenshotPath,
  sendButton,
  sendThroughApi,
  submitDialog
} from './helpers';

const RUN_FILE = 'jupyter-gpu-env:pipeline-run-file';

/** A node that records one value; the report reads its parents' values. */
const step = (value: number): string =>
  notebook(
    [['parameters'], 'upstream = {}'],
    [['results'], `{'value': ${value}}`]
  );

const REPORT = notebook(
  [['parameters'], 'upstream = {}'],
  [
    ['results'],
    "{'total': sum(p['results']['value'] for p in upstream.values())}"
  ]
);

function pipelineFile(name: string): string {
  return [
    `name: ${name}`,
    'nodes:',
    '  prepare: {notebook_path: prepare.ipynb}',
    '  left: {notebook_path: left.ipynb, after: [prepare]}',
    '  right: {notebook_path: right.ipynb, after: [prepare]}',
    '  report: {notebook_path: report.ipynb, after: [left, right]}',
    ''
  ].join('\n');
}

function graphNode(page: IJupyterLabPageFixture, id: string): Locator {
  return page.locator(
    `[data-testid="gpu-env-pipeline-node"][data-node="${id}"]`
  );
}

/** The file browser's entry of `name` (in the folder it shows). */
function listed(page: IJupyterLabPageFixture, name: string): Locator {
  return page.locator(
    `.jp-DirListing-item:has(.jp-DirListing-itemText > span:text-is("${name}"))`
  );
}

async function pipelineNamed(page: IJupyterLabPageFixture, name: string) {
  const list = await apiGet<IPipelineList>(page.request, 'pipelines');
  return list.items.find(p => p.name === name);
}

test.describe('Pipelines', () => {
  test('runs a pipeline file from the file browser and follows its graph', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(300000);
    const name = `diamond-${Date.now()}`;
    for (const [file, content] of [
      ['prepare.ipynb', step(1)],
      ['left.ipynb', step(2)],
      ['right.ipynb', step(3)],
      ['report.ipynb', REPORT],
      ['diamond.pipeline.yaml', pipelineFile(name)]
    ]) {
      expect(
        await page.contents.uploadContent(content, 'text', `${tmpPath}/${file}`)
      ).toBe(true);
    }
    await page.filebrowser.openDirectory(tmpPath);
    await page.filebrowser.refresh();
    const item = listed(page, 'diamond.pipeline.yaml');
    await expect(item).toBeVisible();
    await item.click();
    await item.click({ button: 'right' });
    const run = page.locator(`.lm-Menu-item[data-command="${RUN_FILE}"]`);
    await expect(run).toHaveText(/Run Pipeline/);
    await run.click();

    // The graph: every node and every edge, from parents to children.
    const view = page.getByTestId('gpu-env-pipeline-view');
    await expect(view).toBeVisible();
    await expect(page.getByTestId('gpu-env-pipeline-node')).toHaveCount(4);
    const edges = view.getByTestId('gpu-env-pipeline-edge');
    await expect(edges).toHaveCount(4);
    const pairs = await edges.evaluateAll(paths =>
      paths.map(
        p => `${p.getAttribute('data-from')}>${p.getAttribute('data-to')}`
      )
    );
    expect(pairs.sort()).toEqual([
      'left>report',
      'prepare>left',
      'prepare>right',
      'right>report'
    ]);
    // Parents are drawn above their children.
    const top = async (id: string) =>
      (await graphNode(page, id).boundingBox())!.y;
    expect(await top('prepare')).toBeLessThan(await top('left'));
    expect(await top('left')).toBeLessThan(await top('report'));

    for (const id of ['prepare', 'left', 'right', 'report']) {
      await expect(graphNode(page, id)).toHaveAttribute(
        'data-state',
        'succeeded',
        {
          timeout: 120000
        }
      );
    }
    await expect(view).toHaveAttribute('data-state', 'succeeded');
    const report = graphNode(page, 'report');
    await expect(report.getByTestId('gpu-env-pipeline-node-state')).toHaveText(
      'succeeded'
    );
    await expect(report).toHaveAttribute('data-attempts', '1');

    // Re-run from here: the report runs again (a second attempt).
    await view.screenshot({ path: screenshotPath('pipeline-graph.png') });
    await report.locator('[data-action="rerun"]').click();
    await expect(report).toHaveAttribute('data-attempts', '2');
    await expect(
      report.getByTestId('gpu-env-pipeline-node-attempts')
    ).toHaveText('attempt 2');
    await expect(report).toHaveAttribute('data-state', 'succeeded', {
      timeout: 90000
    });
    await expect(graphNode(page, 'prepare')).toHaveAttribute(
      'data-attempts',
      '1'
    );

    // Keyboard: Enter on a job node opens its job's log.
    await graphNode(page, 'prepare').focus();
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('gpu-env-job-log')).toBeVisible();

    // The Jobs section: the pipeline is one row, its jobs are not listed.
    const pipeline = await pipelineNamed(page, name);
    expect(pipeline?.state).toBe('succeeded');
    await page.sidebar.openTab(PANEL_ID);
    const row = page.locator(
      `[data-testid="gpu-env-pipeline"][data-id="${pipeline!.id}"]`
    );
    await expect(row).toHaveCount(1);
    await expect(row).toHaveAttribute('data-state', 'succeeded');
    await expect(row.getByTestId('gpu-env-pipeline-ended')).toHaveText(
      '4 of 4 nodes'
    );
    for (const node of ['prepare', 'left', 'right', 'report']) {
      await expect(
        page.locator(`[data-testid="gpu-env-job"][data-name="${node}"]`)
      ).toHaveCount(0);
    }

    // The Jobs view: the pipeline is one row (its state, backend, nodes
    // ended), its jobs are not listed apart; it expands to its nodes, the
    // text filter finds it by a node, and its Open graph opens the graph.
    const graphTab = page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab', {
      hasText: `Pipeline: ${name}`
    });
    await graphTab.locator('.lm-TabBar-tabCloseIcon').click();
    await expect(view).toHaveCount(0);
    await runFromPalette(page, 'Open Jobs', {
      command: 'jupyter-gpu-env:open-jobs'
    });
    const jobsView = page.getByTestId('gpu-env-jobs-view');
    const tableRow = jobsView.locator(
      `[data-testid="gpu-env-jobs-row"][data-kind="pipeline"][data-id="${pipeline!.id}"]`
    );
    await expect(tableRow).toHaveCount(1);
    await expect(tableRow).toHaveAttribute('data-state', 'succeeded');
    await expect(tableRow.getByTestId('gpu-env-job-state')).toHaveText(
      'succeeded'
    );
    await expect(tableRow.locator('[data-column="backend"]')).toHaveText(
      'local'
    );
    await expect(
      tableRow.getByTestId('gpu-env-jobs-pipeline-ended')
    ).toHaveText('(4 of 4 nodes)');
    // Ended: nothing to cancel.
    await expect(tableRow.locator('[data-action="cancel"]')).toHaveCount(0);
    for (const node of ['prepare', 'left', 'right', 'report']) {
      await expect(
        jobsView.locator(
          `[data-testid="gpu-env-jobs-row"][data-name="${node}"]`
        )
      ).toHaveCount(0);
    }
    const nodeRows = jobsView.locator(
      `[data-testid="gpu-env-jobs-node"][data-pipeline="${pipeline!.id}"]`
    );
    await expect(nodeRows).toHaveCount(0);
    await tableRow
      .getByRole('button', { name: `Show the nodes of ${name}` })
      .click();
    await expect(tableRow).toHaveAttribute('data-expanded', 'true');
    await expect(nodeRows).toHaveCount(4);
    await expect(nodeRows.first()).toHaveAttribute('data-node', 'prepare');
    await expect(nodeRows.last()).toHaveAttribute('data-node', 'report');
    await jobsView.screenshot({
      path: screenshotPath('jobs-view-pipeline.png')
    });
    for (const node of ['prepare', 'left', 'right', 'report']) {
      await expect(
        nodeRows.and(page.locator(`[data-node="${node}"]`))
      ).toHaveAttribute('data-state', 'succeeded');
    }
    const filter = jobsView.getByTestId('gpu-env-jobs-filter');
    await filter.fill(`${name} report.ipynb`);
    await expect(jobsView.getByTestId('gpu-env-jobs-row')).toHaveCount(1);
    await expect(tableRow).toBeVisible();
    await filter.fill(`${name} no-such-node`);
    await expect(tableRow).toHaveCount(0);
    await filter.fill(name);
    await jobsView
      .getByTestId('gpu-env-jobs-state-filter')
      .selectOption('failed');
    await expect(tableRow).toHaveCount(0);
    await jobsView
      .getByTestId('gpu-env-jobs-state-filter')
      .selectOption('succeeded');
    await expect(tableRow).toBeVisible();
    await tableRow.locator('[data-action="graph"]').click();
    await expect(
      page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current', {
        hasText: `Pipeline: ${name}`
      })
    ).toBeVisible();
    await expect(view).toBeVisible();
    await expect(view.getByTestId('gpu-env-pipeline-node')).toHaveCount(4);

    // In the dark theme, for the record.
    await page.theme.setDarkTheme();
    await row.locator('[data-action="graph"]').click();
    await expect(view).toBeVisible();
    await view.screenshot({ path: screenshotPath('pipeline-graph-dark.png') });
    await page.theme.setLightTheme();
  });

  test('sends a notebook to run after a running job', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(180000);
    const first = await sendThroughApi<IJob>(
      page,
      `${tmpPath}/slow.ipynb`,
      notebook([[], 'import time\ntime.sleep(20)']),
      { name: `slow-${Date.now()}` }
    );
    await openNotebook(page, `${tmpPath}/after.ipynb`, step(5));
    // The sidebar's list knows the job (asked when shown).
    await page.sidebar.openTab(PANEL_ID);
    await expect(
      page.locator(`[data-testid="gpu-env-job"][data-id="${first.id}"]`)
    ).toBeVisible();

    await sendButton(page).click();
    const form = dialog(page).getByTestId('gpu-env-submit-form');
    const after = form.getByTestId('gpu-env-submit-after');
    await expect(after.locator(`option[value="${first.id}"]`)).toHaveCount(1);
    await after.selectOption(first.id);
    await submitDialog(page);

    // The graph shows both: the earlier job and the notebook after it.
    const view = page.getByTestId('gpu-env-pipeline-view');
    await expect(view).toBeVisible();
    await expect(page.getByTestId('gpu-env-pipeline-node')).toHaveCount(2);
    const external = page.locator(
      '[data-testid="gpu-env-pipeline-node"][data-kind="external"]'
    );
    await expect(external).toHaveCount(1);
    await expect(graphNode(page, 'after')).toBeVisible();
    await expect(view.getByTestId('gpu-env-pipeline-edge')).toHaveCount(1);
    await expect(view.getByTestId('gpu-env-pipeline-edge')).toHaveAttribute(
      'data-to',
      'after'
    );
    await expect(graphNode(page, 'after')).toHaveAttribute(
      'data-state',
      'succeeded',
      {
        timeout: 120000
      }
    );
  });
});
