/**
 * What the Jobs section says about GPUs and queues: a job's GPU use (its
 * line, chart and idle warning), a queued job's place, what the chosen
 * backend could start now (in the "Send to batch" dialog), and the weekly
 * GPU-hours. The test server has no GPU and no scheduler: the GPU numbers,
 * queue positions and capacity are answers given in place of the server's
 * (`page.route`); the weekly usage and the sweep listing are the real
 * server's.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator, Route } from '@playwright/test';
import * as fs from 'fs';

import type {
  IClusterCapacity,
  IJob,
  IJobGpuSeries,
  IJobGpuUsage,
  IJobList,
  ISweep
} from '../../labextension/src/api/types';
import {
  API,
  PANEL_ID,
  apiGet,
  clickToastButton,
  dialog,
  dialogButton,
  notebook,
  openNotebook,
  screenshotDialog,
  screenshotPath,
  sendButton,
  sendThroughApi,
  wideSidebar
} from './helpers';

const GIB = 1024 ** 3;

/** A job record as the server lists it, with `fields` over the defaults. */
function job(fields: Partial<IJob> & { id: string; name: string }): IJob {
  const now = Date.now() / 1000;
  const dir = `.gpu-env-jobs/${fields.id}`;
  return {
    backend: 'local',
    backend_job_id: null,
    created_at: now - 1800,
    environment: null,
    estimated_start: null,
    exit_code: null,
    finished_at: null,
    gpu: null,
    group_id: null,
    group_index: null,
    image: null,
    input_path: `${dir}/input.ipynb`,
    job_dir: dir,
    kernel: 'python3',
    log_path: `${dir}/job.log`,
    message: '',
    notebook_path: `${fields.name}.ipynb`,
    output_path: `${dir}/output.ipynb`,
    parameters: {},
    parameters_omitted: false,
    pending_reason: null,
    progress: { cells_done: 2, cells_total: 5 },
    queue: null,
    queue_name: null,
    queue_position: null,
    reason: null,
    resources: {
      cpus: null,
      gpus: 1,
      memory_bytes: null,
      mig_profile: null,
      time_limit_seconds: null
    },
    started_at: now - 1700,
    state: 'running',
    ...fields
  } as IJob;
}

const H100 = {
  name: 'NVIDIA H100 80GB HBM3',
  uuid: 'GPU-4f6c1c39-0000-0000-0000-000000000001',
  mig_profile: null,
  memory_total_bytes: 80 * GIB
};

/**
 * A whole H100, used 23 % on average, 3.1 GiB at most; 0.42 kWh by its
 * energy counter, at a site that set a carbon intensity and prices.
 */
const WHOLE: IJobGpuUsage = {
  available: true,
  reason: null,
  devices: [H100],
  samples: 120,
  interval_seconds: 15,
  mean_utilization_percent: 23,
  peak_utilization_percent: 97,
  peak_memory_bytes: Math.round(3.1 * GIB),
  memory_total_bytes: 80 * GIB,
  idle_fraction: 0.4,
  idle_seconds: 0,
  gpu_hours_allocated: 0.5,
  gpu_hours_used: 0.115,
  energy_joules: 0.42 * 3.6e6,
  energy_source: 'counter',
  energy_note: null,
  co2e_grams: 180,
  cost: { amount: 1.2, currency: 'EUR', gpu_time: 1, energy: 0.2, note: null },
  notes: [],
  updated_at: Date.now() / 1000
};

/**
 * A 1g.10gb slice: memory, but no utilization per slice; its energy an
 * estimate, its GPU's share (the site set no carbon intensity or prices).
 */
const MIG: IJobGpuUsage = {
  ...WHOLE,
  devices: [
    {
      name: 'NVIDIA H100 80GB HBM3 MIG 1g.10gb',
      uuid: 'MIG-00000002-0000-0000-0000-000000000002',
      mig_profile: '1g.10gb',
      memory_total_bytes: 10 * GIB
    }
  ],
  mean_utilization_percent: null,
  peak_utilization_percent: null,
  memory_total_bytes: 10 * GIB,
  idle_fraction: null,
  gpu_hours_used: null,
  energy_joules: 0.12 * 3.6e6,
  energy_source: 'share of a whole GPU',
  energy_note: "An estimate: the whole GPU's energy times the slice's share.",
  co2e_grams: null,
  cost: null,
  notes: ['NVML reports no utilization per MIG slice.']
};

/** A running H100 job idle for the last 15 minutes. */
const IDLE: IJobGpuUsage = {
  ...WHOLE,
  mean_utilization_percent: 8,
  idle_fraction: 0.8,
  idle_seconds: 900
};

const NONE: IJobGpuUsage = {
  ...WHOLE,
  available: false,
  reason: 'no GPU was visible to the job',
  devices: [],
  samples: 0,
  mean_utilization_percent: null,
  peak_utilization_percent: null,
  peak_memory_bytes: null,
  memory_total_bytes: null,
  idle_fraction: null,
  gpu_hours_allocated: null,
  gpu_hours_used: null,
  energy_joules: null,
  energy_source: null,
  energy_note: 'The job saw no GPU.',
  co2e_grams: null,
  cost: null
};

/**
 * 40 samples of one device: utilization up and down (none for a MIG
 * slice), memory growing.
 */
function series(id: string, summary: IJobGpuUsage): IJobGpuSeries {
  const mig = summary.devices.some(device => device.mig_profile);
  const points = Array.from({ length: 40 }, (_, i) => [
    i * 15,
    [mig ? null : i % 10 < 4 ? 60 : 5],
    [Math.round(((i + 1) / 40) * 3.1 * GIB)]
  ]);
  return {
    job_id: id,
    summary,
    devices: summary.devices,
    points
  } as unknown as IJobGpuSeries;
}

/**
 * Answer `GET jobs?group=none` with `extra` before the server's own jobs,
 * and `GET jobs/{id}/gpu` of those with `gpu` from `series`.
 */
async function serveJobs(
  page: IJupyterLabPageFixture,
  extra: IJob[]
): Promise<void> {
  await page.route(at('jobs'), async (route: Route) => {
    const url = new URL(route.request().url());
    if (
      route.request().method() !== 'GET' ||
      url.searchParams.get('group') !== 'none'
    ) {
      return route.fallback();
    }
    const response = await route.fetch();
    const list = (await response.json()) as IJobList;
    await route.fulfill({
      response,
      json: {
        ...list,
        items: [...extra, ...list.items],
        total: list.total + extra.length
      }
    });
  });
  for (const item of extra) {
    if (item.gpu) {
      await page.route(at(`jobs/${item.id}/gpu`), route =>
        route.fulfill({ json: series(item.id, item.gpu as IJobGpuUsage) })
      );
    }
  }
}

/** Matches the URLs of `path` below the API, whatever their query. */
function at(path: string): (url: URL) => boolean {
  return url => url.pathname.endsWith(`${API}/${path}`);
}

function row(page: IJupyterLabPageFixture, id: string): Locator {
  return page
    .getByTestId('gpu-env-job-list')
    .locator(`> [data-testid="gpu-env-job"][data-id="${id}"]`);
}

/** The next answer to the job listing the section asks itself. */
function nextListing(page: IJupyterLabPageFixture) {
  return page.waitForResponse(
    response =>
      response.url().includes(`${API}/jobs?`) &&
      response.url().includes('group=none')
  );
}

/** A job waiting at `position` in the queue 'gpu'. */
function waiting(
  id: string,
  name: string,
  position: number,
  fields: Partial<IJob> = {}
): IJob {
  return job({
    id,
    name,
    state: 'queued',
    started_at: null,
    progress: { cells_done: 0, cells_total: 0 },
    queue_position: position,
    queue_name: 'gpu',
    ...fields
  });
}

/** The fields of a job that succeeded `ago` seconds ago, every cell run. */
function succeededAgo(ago: number): Partial<IJob> {
  return {
    state: 'succeeded',
    finished_at: Date.now() / 1000 - ago,
    progress: { cells_done: 5, cells_total: 5 }
  };
}

test.describe('GPU use and queues in the Jobs section', () => {
  wideSidebar(380);

  test("shows each job's GPU use, its chart, and warns once about an idle GPU", async ({
    page
  }) => {
    const tag = `${Date.now()}`;
    const whole = job({
      id: `whole-${tag}`,
      name: 'train-whole',
      ...succeededAgo(60),
      gpu: WHOLE
    });
    const mig = job({
      id: `mig-${tag}`,
      name: 'train-mig',
      ...succeededAgo(120),
      resources: { ...whole.resources, gpus: null, mig_profile: '1g.10gb' },
      gpu: MIG
    });
    const idle = job({ id: `idle-${tag}`, name: 'train-idle', gpu: IDLE });
    const cpu = job({
      id: `cpu-${tag}`,
      name: 'cpu-only',
      state: 'succeeded',
      finished_at: Date.now() / 1000 - 200,
      resources: { ...whole.resources, gpus: null },
      gpu: NONE
    });
    const cancels: string[] = [];
    await page.route(at(`jobs/${idle.id}/cancel`), route => {
      cancels.push(route.request().method());
      return route.fulfill({
        json: {
          ...idle,
          state: 'cancelled',
          finished_at: Date.now() / 1000
        }
      });
    });
    await serveJobs(page, [idle, whole, mig, cpu]);
    await page.sidebar.openTab(PANEL_ID);

    // A whole H100: the mean utilization and the peak memory of its 80 GiB.
    const wholeRow = row(page, whole.id);
    await expect(wholeRow.getByTestId('gpu-env-job-gpu')).toHaveText(
      'GPU 23% avg · 3.1 of 80 GiB peak'
    );
    // A MIG slice has no utilization of its own: its profile instead.
    await expect(row(page, mig.id).getByTestId('gpu-env-job-gpu')).toHaveText(
      'MIG 1g.10gb · 3.1 of 10 GiB peak'
    );
    // No GPU: nothing on the row, the reason in the tooltip.
    const cpuRow = row(page, cpu.id);
    await expect(cpuRow).toBeVisible();
    await expect(cpuRow.getByTestId('gpu-env-job-gpu')).toHaveCount(0);
    await expect(cpuRow.getByTestId('gpu-env-job-facts')).toHaveAttribute(
      'title',
      /no GPU was visible to the job/
    );
    await expect(wholeRow.getByTestId('gpu-env-job-gpu-idle')).toHaveCount(0);

    // The line opens the chart: utilization and memory over time.
    await wholeRow.getByTestId('gpu-env-job-gpu').click();
    const chart = wholeRow.getByTestId('gpu-env-job-gpu-chart');
    await expect(chart).toBeVisible();
    await expect(
      chart.getByTestId('gpu-env-job-gpu-util-line')
    ).toHaveAttribute('points', /,/);
    await expect(
      chart.getByTestId('gpu-env-job-gpu-memory-line')
    ).toHaveAttribute('points', /,/);
    await expect(chart).toContainText('40 samples over 9:45');
    await expect(wholeRow.getByTestId('gpu-env-job-gpu-details')).toContainText(
      'Peak utilization 97%'
    );
    // Its energy, measured, with the CO2e and cost the site's numbers give.
    await expect(wholeRow.getByTestId('gpu-env-job-energy')).toHaveText(
      /^GPU energy 0\.42 kWh \(measured\) · 180 g CO2e · €1[.,]20$/
    );
    await expect(wholeRow.getByTestId('gpu-env-job-energy')).toHaveAttribute(
      'title',
      /^Cost €1[.,]20: GPU time €1[.,]00, energy €0[.,]20$/
    );
    // The slice's chart has memory only, and says why.
    const migRow = row(page, mig.id);
    await migRow.getByTestId('gpu-env-job-gpu').click();
    await expect(migRow.getByTestId('gpu-env-job-gpu-chart')).toBeVisible();
    await expect(migRow.getByTestId('gpu-env-job-gpu-util-line')).toHaveCount(
      0
    );
    await expect(migRow.getByTestId('gpu-env-job-gpu-details')).toContainText(
      'no utilization per MIG slice'
    );
    // Its energy is an estimate, and says what it rests on; no CO2e or cost.
    const migEnergy = migRow.getByTestId('gpu-env-job-energy');
    await expect(migEnergy).toHaveText(
      'GPU energy 0.12 kWh (estimate: share of a whole GPU)'
    );
    await expect(migEnergy).toHaveAttribute(
      'title',
      "An estimate: the whole GPU's energy times the slice's share."
    );

    // The idle one: a badge on its row, and one notification.
    const idleRow = row(page, idle.id);
    await expect(idleRow.getByTestId('gpu-env-job-gpu-idle')).toHaveText(
      'GPU idle 15 min'
    );
    const warning = page.locator('.jp-toast-message', {
      hasText: "Job 'train-idle' has left its GPU idle for 15 min"
    });
    await expect(warning).toHaveCount(1);
    await page.getByTestId('gpu-env-jobs').screenshot({
      path: screenshotPath('jobs-gpu-use.png')
    });
    // Two more answers, still idle: no second notification.
    await nextListing(page);
    await nextListing(page);
    await expect(warning).toHaveCount(1);

    // Its action cancels the job, after the usual question.
    await clickToastButton(page, warning, 'Cancel job');
    await dialogButton(page, 'Cancel job').click();
    await expect.poll(() => cancels).toEqual(['POST']);
  });

  test("the Jobs view's Energy column: kWh, the rest in its tooltip, one click to sort", async ({
    page
  }) => {
    const tag = `${Date.now()}`;
    const whole = job({
      id: `whole-${tag}`,
      name: `${tag}-whole`,
      ...succeededAgo(60),
      gpu: WHOLE
    });
    const mig = job({
      id: `mig-${tag}`,
      name: `${tag}-mig`,
      ...succeededAgo(120),
      resources: { ...whole.resources, gpus: null, mig_profile: '1g.10gb' },
      gpu: MIG
    });
    const cpu = job({
      id: `cpu-${tag}`,
      name: `${tag}-cpu`,
      ...succeededAgo(200),
      resources: { ...whole.resources, gpus: null },
      gpu: NONE
    });
    // Listed smallest first, so that the sort has something to do.
    await serveJobs(page, [cpu, mig, whole]);
    await page.sidebar.openTab(PANEL_ID);
    await page.getByTestId('gpu-env-open-jobs-view').click();
    const view = page.getByTestId('gpu-env-jobs-view');
    await view.getByTestId('gpu-env-jobs-filter').fill(tag);
    const rows = view.getByTestId('gpu-env-jobs-row');
    await expect(rows).toHaveCount(3);
    const energy = (id: string) =>
      view.locator(
        `[data-testid="gpu-env-jobs-row"][data-id="${id}"] td[data-column="energy"]`
      );
    await expect(energy(whole.id)).toHaveText('0.42 kWh');
    await expect(energy(whole.id)).toHaveAttribute(
      'title',
      /^0\.42 kWh \(measured\)\n180 g CO2e\nCost €1[.,]20: GPU time/
    );
    await expect(energy(mig.id)).toHaveText('0.12 kWh');
    await expect(energy(mig.id)).toHaveAttribute(
      'title',
      /^0\.12 kWh \(estimate: share of a whole GPU\)\nAn estimate: /
    );
    // A job that saw no GPU: an empty cell.
    await expect(energy(cpu.id)).toHaveText('');
    await view.screenshot({ path: screenshotPath('jobs-view-energy.png') });

    // The most first, then the least; the unmeasured last either way.
    const head = view.locator('th[data-column="energy"]');
    await head.getByRole('button').click();
    await expect(head).toHaveAttribute('aria-sort', 'descending');
    await expect(rows.locator('td[data-column="name"]')).toHaveText([
      new RegExp(`^${tag}-whole`),
      new RegExp(`^${tag}-mig`),
      new RegExp(`^${tag}-cpu`)
    ]);
    await head.getByRole('button').click();
    await expect(head).toHaveAttribute('aria-sort', 'ascending');
    await expect(rows.locator('td[data-column="name"]')).toHaveText([
      new RegExp(`^${tag}-mig`),
      new RegExp(`^${tag}-whole`),
      new RegExp(`^${tag}-cpu`)
    ]);
  });

  test('warns about an idle run inside a collapsed sweep', async ({ page }) => {
    const tag = `${Date.now()}`;
    const run = job({
      id: `run-${tag}`,
      name: 'scan [alpha=0.5]',
      group_id: `g${tag}`.slice(0, 12),
      group_index: 1,
      gpu: IDLE
    });
    const sweep = {
      id: run.group_id,
      name: 'scan',
      backend: 'local',
      notebook_path: 'scan.ipynb',
      size: 3,
      max_concurrent: 3,
      varied: ['alpha'],
      parameters: {},
      counts: { queued: 0, running: 3, succeeded: 0, failed: 0, cancelled: 0 },
      state: 'running',
      created_at: Date.now() / 1000 - 60,
      finished_at: null,
      backend_job_id: null,
      gpu_idle_runs: [run.id]
    };
    await page.route(at('sweeps'), async (route: Route) => {
      if (route.request().method() !== 'GET') {
        return route.fallback();
      }
      const response = await route.fetch();
      const list = await response.json();
      await route.fulfill({
        response,
        json: { ...list, items: [sweep, ...list.items], total: list.total + 1 }
      });
    });
    await page.route(at(`sweeps/${sweep.id}`), route =>
      route.fulfill({ json: sweep })
    );
    await page.route(at(`jobs/${run.id}`), route =>
      route.fulfill({ json: run })
    );
    await page.sidebar.openTab(PANEL_ID);
    // The sweep's row says so though its runs are not shown...
    const row = page
      .getByTestId('gpu-env-job-list')
      .locator(`> [data-testid="gpu-env-sweep"][data-id="${sweep.id}"]`);
    await expect(row.getByTestId('gpu-env-sweep-gpu-idle')).toHaveText(
      'GPU idle in 1 run'
    );
    // ...and the run's idle GPU is announced once, with its cancel at hand.
    const warning = page.locator('.jp-toast-message', {
      hasText: "Job 'scan [alpha=0.5]' has left its GPU idle for 15 min"
    });
    await expect(warning).toHaveCount(1);
    await nextListing(page);
    await nextListing(page);
    await expect(warning).toHaveCount(1);
  });

  test("says a queued job's place in its queue and when it may start", async ({
    page
  }) => {
    const tag = `${Date.now()}`;
    // Today 23:59 in the browser's time zone: shown as a clock.
    const tonight = await page.evaluate(() => {
      const at = new Date();
      at.setHours(23, 59, 0, 0);
      return at.getTime() / 1000;
    });
    const queued = waiting(`queued-${tag}`, 'waiting-third', 3, {
      estimated_start: tonight,
      pending_reason: 'Priority'
    });
    const next = waiting(`next-${tag}`, 'waiting-next', 1);
    const later = waiting(`later-${tag}`, 'waiting-22nd', 22, {
      // Tomorrow: a date with the clock.
      estimated_start: tonight + 12 * 3600
    });
    await serveJobs(page, [queued, next, later]);
    await page.sidebar.openTab(PANEL_ID);

    await expect(
      row(page, queued.id).getByTestId('gpu-env-job-queue')
    ).toHaveText("3rd in queue 'gpu', estimated start 23:59");
    await expect(
      row(page, queued.id).getByTestId('gpu-env-job-pending')
    ).toHaveText('Priority');
    await expect(
      row(page, next.id).getByTestId('gpu-env-job-queue')
    ).toHaveText("next in queue 'gpu'");
    await expect(
      row(page, later.id).getByTestId('gpu-env-job-queue')
    ).toHaveText(/^22nd in queue 'gpu', estimated start \S+ \S+ 11:59$/);
  });

  test('shows what the backend could start now beside the GPU choice', async ({
    page,
    tmpPath
  }) => {
    // The local backend offered as if it had an H100 cut into MIG slices.
    await page.route(at('backends'), async route => {
      const response = await route.fetch();
      const body = await response.json();
      for (const backend of body.backends) {
        if (backend.name === 'local') {
          backend.supports_gpus = true;
          backend.mig_profiles = ['1g.10gb', '3g.40gb'];
        }
      }
      await route.fulfill({ response, json: body });
    });
    let capacity: IClusterCapacity = {
      available: true,
      message: '',
      read_at: Date.now() / 1000,
      rows: [
        {
          resource: 'nvidia.com/mig-1g.10gb',
          profile: '1g.10gb',
          gpu_model: 'NVIDIA-H100-80GB-HBM3',
          total: 7,
          used: 4,
          free: 3,
          nodes: 1
        },
        {
          resource: 'nvidia.com/mig-3g.40gb',
          profile: '3g.40gb',
          gpu_model: 'NVIDIA-H100-80GB-HBM3',
          total: 2,
          used: 2,
          free: 0,
          nodes: 1
        },
        {
          resource: 'nvidia.com/gpu',
          profile: null,
          gpu_model: '',
          total: 8,
          used: 6,
          free: 2,
          nodes: 2
        }
      ]
    };
    const asked: string[] = [];
    await page.route(at('backends/local/capacity'), route => {
      asked.push(new URL(route.request().url()).pathname);
      return route.fulfill({ json: capacity });
    });
    await openNotebook(
      page,
      `${tmpPath}/capacity.ipynb`,
      notebook([['parameters'], 'alpha = 1'], [[], 'print(alpha)'])
    );
    await sendButton(page).click();

    const form = dialog(page).getByTestId('gpu-env-submit-form');
    const free = form.getByTestId('gpu-env-submit-capacity');
    await expect(free.getByTestId('gpu-env-capacity-row')).toHaveText([
      '1g.10gb: 3 free of 7',
      '3g.40gb: 0 free of 2',
      'GPUs: 2 free of 8'
    ]);
    expect(asked).toEqual([`${API}/backends/local/capacity`]);
    // None free: marked, still offered (the job queues).
    await expect(
      free.locator('[data-testid="gpu-env-capacity-row"][data-free="0"]')
    ).toHaveText('3g.40gb: 0 free of 2');
    const mig = form.getByTestId('gpu-env-submit-mig');
    await expect(mig.locator('option[value="3g.40gb"]')).toHaveText(
      '3g.40gb (none free: queues)'
    );
    await expect(mig.locator('option[value="1g.10gb"]')).toHaveText(
      '1g.10gb (3 free)'
    );
    await mig.selectOption('3g.40gb');
    await expect(mig).toHaveValue('3g.40gb');
    await screenshotDialog(page, 'jobs-capacity.png');
    await dialogButton(page, 'Cancel').click();

    // Where the backend cannot tell, its message, muted.
    capacity = {
      available: false,
      message: 'No cluster source is configured for this backend.',
      read_at: null,
      rows: []
    };
    await sendButton(page).click();
    await expect(form.getByTestId('gpu-env-capacity-message')).toHaveText(
      'No cluster source is configured for this backend.'
    );
    await expect(form.getByTestId('gpu-env-capacity-row')).toHaveCount(0);
    await dialogButton(page, 'Cancel').click();
  });
});

test.describe('Jobs section against the real server', () => {
  wideSidebar(380);

  test('charts the weekly GPU-hours and downloads them as CSV', async ({
    page
  }) => {
    await page.sidebar.openTab(PANEL_ID);
    const usage = page.getByTestId('gpu-env-jobs-usage');
    await expect(usage).toContainText(/This week: [<\d.]+ GPU-hours/);

    await usage.getByTestId('gpu-env-usage-weeks-toggle').click();
    const chart = usage.getByTestId('gpu-env-usage-weeks');
    await expect(chart).toBeVisible();
    await expect(chart.getByTestId('gpu-env-usage-week')).toHaveCount(8);
    await expect(chart.locator('rect.jp-GpuEnv-weekAllocated')).toHaveCount(8);
    await expect(chart.locator('rect.jp-GpuEnv-weekUsed')).toHaveCount(8);

    // The same weeks in kWh: the test server has no GPU, so no job measured
    // its energy, and the chart says so.
    await usage.getByTestId('gpu-env-usage-measure-energy').click();
    await expect(chart).toHaveAttribute('data-measure', 'energy');
    await expect(chart.locator('rect.jp-GpuEnv-weekEnergy')).toHaveCount(8);
    await expect(usage.getByTestId('gpu-env-usage-weeks-empty')).toHaveText(
      /^No GPU energy measured in the last 8 weeks\./
    );
    await usage.getByTestId('gpu-env-usage-measure-hours').click();
    await expect(chart.locator('rect.jp-GpuEnv-weekAllocated')).toHaveCount(8);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      usage.getByTestId('gpu-env-usage-csv').click()
    ]);
    expect(download.suggestedFilename()).toBe('gpu-usage.csv');
    const text = fs.readFileSync((await download.path()) ?? '', 'utf-8');
    const lines = text.trim().split(/\r?\n/);
    expect(lines[0]).toBe(
      'week_start,backend,gpu_hours,gpu_hours_used,gpu_hours_measured,efficiency,cpu_hours,' +
        'gpu_energy_kwh,co2e_grams,cost,currency'
    );
    expect(lines.filter(line => line.split(',')[1] === 'all')).toHaveLength(8);
  });

  test('lists a sweep once, from GET sweeps, beside the other jobs', async ({
    page,
    tmpPath
  }) => {
    // Its three runs end before the next test, which they would slow.
    test.setTimeout(180000);
    const name = `listed-once-${Date.now()}`;
    const sweep = await sendThroughApi<ISweep>(
      page,
      `${tmpPath}/${name}.ipynb`,
      notebook([['parameters'], 'alpha = 1'], [[], 'print(alpha)']),
      { name, sweep: { alpha: [1, 2, 3] } }
    );

    // The section asks GET sweeps, and finds the sweep there.
    const sweepsAnswer = page.waitForResponse(
      async answer =>
        answer.url().includes(`${API}/sweeps?`) &&
        answer.request().method() === 'GET' &&
        ((await answer.json()) as { items: { id: string }[] }).items.some(
          s => s.id === sweep.id
        )
    );
    const jobsAnswer = nextListing(page);
    await page.sidebar.openTab(PANEL_ID);
    await sweepsAnswer;
    // The job listing leaves the runs of sweeps out.
    const jobs = (await (await jobsAnswer).json()) as IJobList;
    expect(jobs.items.filter(j => j.group_id !== null)).toEqual([]);

    const list = page.getByTestId('gpu-env-job-list');
    const rows = list.locator(
      `> [data-testid="gpu-env-sweep"][data-id="${sweep.id}"]`
    );
    await expect(rows).toHaveCount(1);
    await expect(rows).toHaveAttribute('data-size', '3');
    await expect(
      list.locator(`> [data-testid="gpu-env-job"][data-name^="${name}"]`)
    ).toHaveCount(0);
    // Newest first: the sweep just sent comes before every listed job.
    await expect(list.locator('> li').first()).toHaveAttribute(
      'data-id',
      sweep.id
    );
    await expect(rows).toHaveAttribute('data-ended', '3', { timeout: 120000 });

    // Expanded, its runs come from GET jobs?group=ID.
    const runsAnswer = page.waitForResponse(answer =>
      answer.url().includes(`group=${sweep.id}`)
    );
    await rows.locator('.jp-GpuEnv-sweepRunsToggle').click();
    expect((await runsAnswer).ok()).toBe(true);
    await expect(
      rows.getByTestId('gpu-env-sweep-runs').getByTestId('gpu-env-job')
    ).toHaveCount(3);
    const all = await apiGet<IJobList>(page.request, `jobs?group=${sweep.id}`);
    expect(all.items).toHaveLength(3);
  });
});
