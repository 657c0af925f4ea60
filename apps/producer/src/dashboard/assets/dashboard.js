// Draws the dashboard's charts with Chart.js (loaded before this file) from the JSON
// endpoints named in each canvas's data-src. No inline script: a strict CSP can apply.
(() => {
  const COLORS = {
    accepted: '#8892a6',
    claimed: '#2f5bd3',
    completed: '#2e9d57',
    failed: '#c83a3a',
    recovery_required: '#e07b00',
    manual_reconcile: '#b8860b',
    interrupted: '#7b4fc9',
    cancelled: '#555',
  };
  const shortTime = (iso) => iso.slice(11, 16);

  async function load(canvas) {
    const response = await fetch(canvas.dataset.src, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`${canvas.dataset.src}: HTTP ${response.status}`);
    return response.json();
  }

  function transitions(canvas, data) {
    return new window.Chart(canvas, {
      type: 'bar',
      data: {
        labels: data.labels.map(shortTime),
        datasets: data.series.map((s) => ({ label: s.name, data: s.data, backgroundColor: COLORS[s.name] ?? '#999', stack: 'events' })),
      },
      options: { animation: false, maintainAspectRatio: false, scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } },
    });
  }

  function recoveries(canvas, data) {
    // Points big enough to read a bucket of its own (a line needs two), never clipped at the top.
    const line = (label, values, color) => ({
      type: 'line',
      label,
      data: values,
      borderColor: color,
      backgroundColor: color,
      yAxisID: 'ms',
      spanGaps: true,
      pointRadius: 4,
      pointHoverRadius: 6,
      clip: false,
    });
    return new window.Chart(canvas, {
      data: {
        labels: data.labels.map(shortTime),
        datasets: [
          { type: 'bar', label: 'recoveries', data: data.recoveries, backgroundColor: '#f3c58a', yAxisID: 'n', maxBarThickness: 24 },
          line('p50 ms', data.p50, '#2f5bd3'),
          line('p95 ms', data.p95, '#e07b00'),
          line('max ms', data.max, '#c83a3a'),
        ],
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: {
          n: { position: 'right', beginAtZero: true, grace: '10%', ticks: { precision: 0 }, title: { display: true, text: 'recoveries' } },
          ms: { beginAtZero: true, grace: '10%', title: { display: true, text: 'ms' } },
        },
      },
    });
  }

  const DRAW = { 'transitions-chart': transitions, 'recovery-chart': recoveries };
  for (const [id, draw] of Object.entries(DRAW)) {
    const canvas = document.getElementById(id);
    if (!canvas || !window.Chart) continue;
    load(canvas)
      .then((data) => {
        draw(canvas, data);
        canvas.dataset.drawn = 'true';
      })
      .catch((err) => {
        canvas.replaceWith(Object.assign(document.createElement('p'), { className: 'error', textContent: `Chart unavailable: ${err.message}` }));
      });
  }
})();
