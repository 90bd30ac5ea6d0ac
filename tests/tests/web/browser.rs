//! A real Chromium driven over WebDriver (Debian's `chromium` and `chromium-driver`):
//! the browser is stopped with its chromedriver, found by its own profile directory.
//! Under CI a missing browser fails the test; elsewhere the test says so and returns.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::error::{CmdError, ErrorStatus};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use vigil_tests::{free_port, processes_matching, wait_until};

/// How long a test waits for something to show up on the page.
pub const WAIT: Duration = Duration::from_secs(30);

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A browser session with its chromedriver.
pub struct Browser {
    pub client: Client,
    pub base: String,
    driver: Child,
    log: PathBuf,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium at `width`×`height` pointed at `base`; None when there is no browser
    /// on this machine and this is not CI.
    pub async fn start(base: &str, width: u32, height: u32) -> Option<Browser> {
        if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
            let msg = "chromium and chromium-driver are needed (apt-get install chromium chromium-driver; .ci/run installs them)";
            assert!(std::env::var_os("CI").is_none(), "{msg}");
            eprintln!("skipping the browser test: {msg}");
            return None;
        }
        let port = free_port();
        let profile = tempfile::Builder::new()
            .prefix("vigil-chromium-")
            .tempdir()
            .unwrap();
        let log = profile.path().join("chromedriver.log");
        let out = std::fs::File::create(&log).unwrap();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("spawn chromedriver");
        let url = format!("http://127.0.0.1:{port}");
        let ready = wait_until(WAIT, || async {
            reqwest::get(format!("{url}/status")).await.is_ok()
        })
        .await;
        assert!(ready, "chromedriver did not start");
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": CHROMIUM,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--no-first-run", "--disable-extensions", "--hide-scrollbars",
                    format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.path().join("profile").display()),
                ],
            }),
        );
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&url)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start chromium: {e}\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            });
        client
            .set_window_size(width, height)
            .await
            .expect("window size");
        let browser = Browser {
            client,
            base: base.trim_end_matches('/').to_owned(),
            driver,
            log,
            _profile: profile,
        };
        browser
            .client
            .goto(&browser.base)
            .await
            .expect("open the page");
        Some(browser)
    }

    /// Ends the browser session.
    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }

    /// The first element matching `css`, waiting for it to appear.
    pub async fn find(&self, css: &str) -> Element {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok(el) = self.client.find(Locator::Css(css)).await {
                return el;
            }
            if Instant::now() >= deadline {
                self.fail(&format!("no element {css:?} on the page")).await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Fails the test with `why`, the page's text and a screenshot
    /// (target/screenshots/failure-*.png).
    pub async fn fail(&self, why: &str) -> ! {
        let name = format!("failure-{}", std::process::id());
        self.save("target/screenshots", &name).await;
        panic!(
            "{why}; screenshot target/screenshots/{name}.png; the page shows:\n{}",
            self.text("body").await
        );
    }

    /// Every element matching `css` now.
    pub async fn all(&self, css: &str) -> Vec<Element> {
        self.client
            .find_all(Locator::Css(css))
            .await
            .unwrap_or_default()
    }

    /// The text of the first element matching `css` now ("" when there is none).
    pub async fn text(&self, css: &str) -> String {
        match self.client.find(Locator::Css(css)).await {
            Ok(el) => el.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// Waits until an element matching `css` has a text containing `needle`; returns it.
    pub async fn wait_text(&self, css: &str, needle: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            for el in self.all(css).await {
                let text = el.text().await.unwrap_or_default();
                if text.contains(needle) {
                    return text;
                }
            }
            if Instant::now() >= deadline {
                self.fail(&format!("no {css:?} with {needle:?}")).await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until `script` (a function body returning a value) returns something truthy.
    pub async fn wait_js(&self, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let value = self.js(script).await;
            if !(value.is_null()
                || value == json!(false)
                || value == json!("")
                || value == json!(0))
            {
                return value;
            }
            if Instant::now() >= deadline {
                self.fail(&format!("waited in vain for {what}")).await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Runs `script` in the page.
    pub async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, vec![])
            .await
            .unwrap_or(Value::Null)
    }

    /// Types `text` into the element matching `css` (WebDriver key codes allowed).
    pub async fn type_into(&self, css: &str, text: &str) {
        self.find(css).await.send_keys(text).await.expect("type");
    }

    /// Clicks the element matching `css`. A page that re-renders the element between the
    /// find and the click (a list refreshed as the search is typed) makes it stale: it is
    /// found again, for up to [`WAIT`].
    pub async fn click(&self, css: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            match self.find(css).await.click().await {
                Ok(_) => return,
                Err(CmdError::Standard(e))
                    if e.error == ErrorStatus::StaleElementReference
                        && Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => self.fail(&format!("click on {css:?}: {e}")).await,
            }
        }
    }

    /// Signs in with `token` and waits for the chat.
    pub async fn sign_in(&self, token: &str) {
        self.type_into("#token", token).await;
        self.click(".signin button").await;
        self.find(".composer-input").await;
    }

    /// Sends `message` with Enter.
    pub async fn send(&self, message: &str) {
        self.type_into(".composer-input", &format!("{message}{ENTER}"))
            .await;
    }

    /// Saves a PNG of the page to target/screenshots/NAME.png, and to docs/images/ when
    /// VIGIL_UPDATE_SCREENSHOTS is set.
    pub async fn screenshot(&self, name: &str) {
        self.save("target/screenshots", name).await;
        if std::env::var_os("VIGIL_UPDATE_SCREENSHOTS").is_some() {
            self.save("docs/images", name).await;
        }
    }

    /// Writes a PNG of the page to `dir` (relative to the workspace) as NAME.png.
    async fn save(&self, dir: &str, name: &str) {
        let Ok(png) = self.client.screenshot().await else {
            return;
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let dir = root.join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), &png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "---- chromedriver log ----\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        // The browser processes chromedriver started, found by their profile directory.
        // (Not `kill -KILL -PGID`: procps-ng 4.0.2's kill misreads a negative id and
        // signals every process.)
        let marker = self._profile.path().display().to_string();
        for pid in processes_matching(&marker) {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .status();
        }
    }
}

/// WebDriver's Enter, Escape and Shift keys.
pub const ENTER: &str = "\u{E007}";
pub const ESCAPE: &str = "\u{E00C}";
pub const SHIFT: &str = "\u{E008}";
