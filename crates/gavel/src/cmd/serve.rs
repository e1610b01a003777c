//! `gavel serve`: the web UI over the store. Runs started in the UI execute in
//! this process through the session, so they store exactly what a CLI run stores.

use clap::Args;

use super::{EXIT_OK, StoreArgs};

/// No `Debug`: the configuration holds the shared token.
#[derive(Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    config: gavel_web::Config,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn serve(args: ServeArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let db = gavel::store::mask_url(&args.store.db);
    eprintln!("gavel UI on http://{} · store {db}", args.config.bind);
    gavel_web::serve(store, args.config).await?;
    Ok(EXIT_OK)
}
