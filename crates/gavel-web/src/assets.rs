//! The embedded static files: htmx, uPlot (both vendored from npm, with their
//! licences beside them in `assets/`), the stylesheet and the page scripts.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

const FILES: &[(&str, &str, &str)] = &[
    (
        "htmx.min.js",
        "text/javascript",
        include_str!("../assets/htmx-2.0.11.min.js"),
    ),
    (
        "uPlot.min.js",
        "text/javascript",
        include_str!("../assets/uPlot-1.6.32.iife.min.js"),
    ),
    (
        "uPlot.min.css",
        "text/css",
        include_str!("../assets/uPlot-1.6.32.min.css"),
    ),
    ("gavel.css", "text/css", include_str!("../assets/gavel.css")),
    (
        "trends.js",
        "text/javascript",
        include_str!("../assets/trends.js"),
    ),
    (
        "review.js",
        "text/javascript",
        include_str!("../assets/review.js"),
    ),
    (
        "live.js",
        "text/javascript",
        include_str!("../assets/live.js"),
    ),
];

/// `GET /assets/{file}`.
pub(crate) async fn asset(Path(file): Path<String>) -> Response {
    match FILES.iter().find(|(name, ..)| *name == file) {
        Some((_, mime, body)) => (
            [
                (header::CONTENT_TYPE, *mime),
                (header::CACHE_CONTROL, "public, max-age=3600"),
            ],
            *body,
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
