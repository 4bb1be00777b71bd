// tracerl view: the log-probability toggle and the curves (uPlot, served from /static/vendor).
"use strict";

function setupToggle() {
  const box = document.getElementById("show-logprob");
  if (!box) return;
  const apply = () => document.body.classList.toggle("show-logprob", box.checked);
  box.addEventListener("change", apply);
  apply();
}

// 3 significant digits, so that a KL of 0.0004 does not show as 0; tiny ones as 3e-7
const number = v => (v == null ? "" : v !== 0 && Math.abs(v) < 1e-3 ? v.toExponential(0)
  : String(Number(v.toPrecision(3))));

const COLORS = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83", "#6e7781", "#bf3989"];

function chartOptions(chart, width) {
  const series = [{ label: "step" }];
  chart.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    series.push({
      label: s.label, stroke: color, width: 1.5, spanGaps: true,
      points: { show: s.points || chart.x.length <= 40, size: s.points ? 6 : 4, fill: color },
    });
  });
  // an all-equal series (0 clip fraction, no unjudged sample) gets a small range around
  // its value rather than uPlot's default 0-100
  const y = chart.unit_range ? { range: [-0.03, 1.03] } : {
    range: (u, min, max) => min === max ? [min - 1, max + 1] : uPlot.rangeNum(min, max, 0.1, true),
  };
  return {
    width: width, height: 220, series: series,
    scales: { x: { time: false }, y: y },
    axes: [
      { label: chart.xlabel, size: 40, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] },
      { label: chart.ylabel, size: 66, values: (u, ticks) => ticks.map(number) },
    ],
    legend: { live: true },
  };
}

async function drawCharts() {
  const holder = document.getElementById("charts");
  if (!holder) return;
  let data;
  try {
    data = await (await fetch(holder.dataset.src)).json();
  } catch (err) {
    holder.textContent = "could not load the curves: " + err;
    return;
  }
  holder.textContent = "";
  if (!data.charts.length) {
    holder.textContent = "No curves yet: metrics.jsonl has no records.";
    return;
  }
  for (const chart of data.charts) {
    const box = document.createElement("div");
    box.className = "chart";
    box.dataset.title = chart.title;
    const title = document.createElement("h3");
    title.textContent = chart.title;  // text, never markup
    box.appendChild(title);
    holder.appendChild(box);
    const width = Math.max(320, box.clientWidth - 12);
    new uPlot(chartOptions(chart, width), [chart.x, ...chart.series.map(s => s.values)], box);
  }
  holder.dataset.ready = "true";
}

document.addEventListener("DOMContentLoaded", () => { setupToggle(); drawCharts(); });
