//! `simulate --sweep … --plot out.svg`: throughput, retries per request and p99 latency
//! against the swept value, one line per model, as one SVG file.

use std::path::Path;

use interlock::Simulation;
use plotters::prelude::*;

type Sims = [(String, Option<String>, Simulation)];

/// A figure a panel plots.
type Metric = fn(&interlock::Figures) -> f64;

/// Draws the three panels; the swept values must be numbers (their order is kept).
pub fn write(path: &Path, param: &str, sims: &Sims) -> Result<(), String> {
    let root = SVGBackend::new(path, (1200, 400)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let panels = root.split_evenly((1, 3));
    let metrics: [(&str, Metric); 3] = [
        ("requests per second", |f| f.throughput),
        ("retries per request", |f| f.retries_per_request),
        ("p99 latency (ms)", |f| f.latency_p99_ms),
    ];
    for (panel, (title, metric)) in panels.iter().zip(metrics) {
        panel_chart(panel, param, title, metric, sims)?;
    }
    root.present().map_err(|e| e.to_string())
}

/// Each model's points: (swept value, metric of all its requests).
fn series(sims: &Sims, metric: fn(&interlock::Figures) -> f64) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for (file, value, sim) in sims {
        let x = value.as_deref().and_then(number).unwrap_or(0.0);
        let y = sim.figures().last().map_or(0.0, metric);
        let name = crate::simulate_cmd::short(file).to_string();
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push((x, y)),
            None => out.push((name, vec![(x, y)])),
        }
    }
    out
}

/// `100`, `50ms`, `2s` as a number (milliseconds for durations).
fn number(v: &str) -> Option<f64> {
    let digits = v.chars().take_while(char::is_ascii_digit).count();
    let n: f64 = v[..digits].parse().ok()?;
    Some(match &v[digits..] {
        "s" => n * 1000.0,
        _ => n,
    })
}

fn panel_chart(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    param: &str,
    title: &str,
    metric: fn(&interlock::Figures) -> f64,
    sims: &Sims,
) -> Result<(), String> {
    let mut lines = series(sims, metric);
    // Values spread over two decades or more (hot rows 1 … 1000) are placed on a log scale.
    let all_x = || lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let (lo, hi) = all_x().fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let log = lo > 0.0 && hi / lo >= 100.0;
    if log {
        for (_, pts) in &mut lines {
            for p in pts.iter_mut() {
                p.0 = p.0.log10();
            }
        }
    }
    let xs = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let y1 = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .fold(0.0f64, f64::max);
    let (x0, x1) = if x0 < x1 {
        (x0, x1)
    } else {
        (x0 - 1.0, x0 + 1.0)
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(56)
        .build_cartesian_2d(x0..x1, 0.0..(y1 * 1.1).max(1.0))
        .map_err(|e| e.to_string())?;
    let desc = if log {
        format!("{param} (log scale)")
    } else {
        param.to_string()
    };
    let label = |v: &f64| format!("{}", (10f64.powf(*v) * 10.0).round() / 10.0);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(desc);
    if log {
        mesh.x_label_formatter(&label);
    }
    mesh.draw().map_err(|e| e.to_string())?;
    for (i, (name, pts)) in lines.into_iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
            .map_err(|e| e.to_string())?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}
