//! The word lists of phantom detection, as space-separated text (one list per line of
//! meaning; looked up with [`has`]).

/// Words that, before a verb in its clause, make it a negation, a condition, a modal or a
/// future: no claim.
pub(super) const NEGATORS: &str = "not never no nothing none nobody neither nor without \
    cannot can could will would should shall may might must if unless once whether want like \
    need needs going plan planning let ready tried try trying attempted unable instead rather \
    please you recommend suggest consider";

/// Words allowed between a subject (or `been`) and the verb.
pub(super) const FILLER: &str = "have has had just also then already now successfully \
    quickly finally went ahead and gone both all manually immediately safely gracefully fully \
    completely promptly first simply actually automatically previously recently done ok okay so";

/// First-person subjects.
pub(super) const SUBJECTS: &str = "i we i've we've i'd we'd";

/// Words that make a passive a report of history rather than a claim of this turn's act.
pub(super) const HISTORY: &str = "at ago since times time yesterday today earlier last by \
    during every daily hourly recently previously automatically am pm twice once";

/// Words of a sentence that reports a failed attempt.
pub(super) const FAILURE: &str = "fail failed error errors offline unreachable timed timeout \
    denied refused blocked couldn't unable cannot can't";

/// Past verbs of change, each with the words of its family (in a write's command or a read's
/// output). A verb with no family accepts any successful write.
const ACTIONS: &str = "
restarted: restart reboot
stopped: stop shutdown kill halt exited inactive dead poweroff
started: start running active
reloaded: reload restart hup
rebooted: reboot restart boot
shut: shutdown stop poweroff halt
killed: kill stop terminat
terminated: kill stop terminat
deleted removed purged pruned uninstalled: rm delet remov purg prun uninstall unlink rmi truncat clean vacuum
installed upgraded: install upgrad apt dnf yum apk pip npm update
enabled: enabl
disabled: disabl
scaled: scale
rolled: rollout rollback undo roll
mounted unmounted: mount
updated edited changed fixed applied modified created wrote cleared freed configured reconfigured:
replaced patched reset rotated added renamed moved flushed resized increased decreased:
raised lowered deployed redeployed adjusted corrected repaired:
";

/// First-person verbs of looking that a successful read supports.
pub(super) const LOOKS: &str = "checked looked inspected verified confirmed examined reviewed \
    queried investigated tested pinged searched found saw noticed tailed grepped listed pulled \
    fetched scanned observed analyzed analysed";

/// First-person verbs of running that any successful call supports.
pub(super) const RUNS: &str = "ran executed";

/// Phrases that report what output showed and need a successful read, one a line.
pub(super) const READ_REPORTS: &str = "logs show|log shows|logs shows|logs indicate|\
    log indicates|logs reveal|log reveals|logs confirm|log confirms|logs say|log says|\
    journal shows|according to the logs|according to the log|according to the journal|\
    results show|i can see";

/// Phrases that report command output and need any successful call.
pub(super) const RUN_REPORTS: &str = "output shows|output show|output indicates|\
    output confirms|according to the output|command returned|command shows";

/// Phrases that claim a present state reached in this turn.
pub(super) const STATES: &str = "is now running|are now running|is now up|are now up|\
    is now active|is now online|is now healthy|are now healthy|is now working|is now stopped|\
    are now stopped|is now fixed|is back up|are back up|is back online|are back online|\
    up and running|running again|working again|online again";

/// Words that make a percentage a figure about resource usage.
pub(super) const USAGE: &str = "cpu memory mem ram disk disks swap load usage used use free \
    available utilization utilisation space storage full capacity consumption consuming using \
    heap inode inodes filesystem volume partition";

/// Words of advice or of a condition: figures there are not observations.
pub(super) const ADVICE: &str = "set setting recommend recommended suggest should could would \
    can may might if when whenever threshold limit limits e eg example typically usually \
    default least minimum maximum max min up like such target aim keep increase reduce \
    allocate give need needs requires require";

/// Whether the space-separated `list` holds `word`.
pub(super) fn has(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|w| w == word)
}

/// The phrases of a `|`-separated list, as words.
pub(super) fn phrases(list: &str) -> impl Iterator<Item = Vec<&str>> {
    list.split('|').map(|p| p.split_whitespace().collect())
}

/// The family of a past verb of change (empty: any write), or `None` when `word` is not one.
pub(super) fn action_family(word: &str) -> Option<Vec<&'static str>> {
    ACTIONS.lines().find_map(|line| {
        let (verbs, family) = line.split_once(':')?;
        has(verbs, word).then(|| family.split_whitespace().collect())
    })
}
