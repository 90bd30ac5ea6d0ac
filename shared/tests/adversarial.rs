//! Bypass attempts against the classifier. Each must come out write/unknown (or, for the
//! last group, not runnable as a read), whatever trick hides the write.

use vigil_shared::policy::{Intent, classify};

fn assert_write(cases: &[&str]) {
    let leaks: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            let v = classify(c);
            (v.intent != Intent::WriteOrUnknown)
                .then(|| format!("{c:?} → {:?} {:?}", v.intent, v.reasons))
        })
        .collect();
    assert!(
        leaks.is_empty(),
        "classified as read:\n{}",
        leaks.join("\n")
    );
}

#[test]
fn read_only_prefix_before_a_write() {
    assert_write(&[
        "cat /etc/hosts; rm -rf /tmp/x",
        "uptime && reboot",
        "ls || shutdown -h now",
        "df -h | tee /etc/motd",
        "ls;rm x",
        "ls ; ; rm x",
    ]);
}

#[test]
fn newline_and_other_separators() {
    assert_write(&[
        "uptime\nrm -f /tmp/x",
        "ls\r\nrm x",
        "ls\n\n\nrm x",
        "ls # comment\nrm x",
        "ls \\\n; rm x",
    ]);
}

#[test]
fn quoting_and_escaping_the_name() {
    assert_write(&[
        "'r'm x",
        "\"rm\" -rf /tmp/x",
        "r\\m x",
        "\\rm x",
        "r''m x",
        "\"r\"\"m\" x",
        "$'\\x72m' x",
        "$'rm' x",
    ]);
}

#[test]
fn path_qualified_names() {
    assert_write(&[
        "/bin/rm x",
        "/usr/bin/systemctl restart x",
        "/tmp/cat /etc/passwd",
        "./cat x",
        "../bin/ls",
        "/usr/local/bin/../../../tmp/x",
        "//bin/rm x",
    ]);
}

#[test]
fn expansion_in_command_position() {
    assert_write(&[
        "$CMD arg",
        "${CMD} arg",
        "\"$CMD\" arg",
        "$1",
        "`echo rm` x",
        "$(echo rm) x",
        "${X:-rm} x",
        "~/bin/tool",
        "*",
        "/bin/r? x",
        "{rm,x}",
    ]);
}

#[test]
fn aliases_functions_and_builtins() {
    assert_write(&[
        "alias ls='rm -rf /'; ls",
        "f() { rm x; }; f",
        "function f { rm x; }; f",
        "eval 'rm x'",
        "source /tmp/x",
        ". /tmp/x",
        "exec rm x",
        "command rm x",
        "builtin eval rm",
        "trap 'rm x' EXIT",
        "enable -f x y",
        "hash -p /tmp/x ls; ls",
    ]);
}

#[test]
fn subshells_groups_and_control_flow() {
    assert_write(&[
        "(rm x)",
        "{ rm x; }",
        "(ls; (rm x))",
        "! rm x",
        "if true; then rm x; fi",
        "if rm x; then ls; fi",
        "for f in a; do rm $f; done",
        "while true; do ls; done",
        "until false; do ls; done",
        "[[ $(rm x) ]]",
        "case a in a) rm x;; esac",
    ]);
}

#[test]
fn background_jobs() {
    assert_write(&[
        "rm x & ls",
        "ls & rm x",
        "sleep 1 &",
        "ls &\nrm x",
        "nohup ls",
        "setsid ls",
    ]);
}

#[test]
fn network_redirections() {
    assert_write(&[
        "cat < /dev/tcp/10.0.0.1/80",
        "echo x > /dev/tcp/10.0.0.1/80",
        "exec 3<>/dev/tcp/h/80",
        "ls > /dev/udp/1.2.3.4/53",
        "cat 0<>/dev/tcp/h/1",
    ]);
}

#[test]
fn interpreters_with_code() {
    assert_write(&[
        "python3 -c 'import os; os.remove(\"x\")'",
        "perl -e 'unlink \"x\"'",
        "ruby -e 'File.delete(\"x\")'",
        "node -e 'require(\"fs\").rmSync(\"x\")'",
        "php -r 'unlink(\"x\");'",
        "lua -e 'os.remove(\"x\")'",
        "awk 'BEGIN { system(\"id > /tmp/id\") }'",
        "awk '{print > \"/tmp/x\"}' f",
        "awk '{print | \"sh\"}' f",
        "awk 'BEGIN { \"date\" | getline d }'",
        "perl -ne 'print' f",
        "python3 script.py",
        "bash script.sh",
        "sh /tmp/x",
        "busybox rm x",
        "busybox sh -c 'rm x'",
    ]);
}

#[test]
fn nested_shells_and_wrappers() {
    assert_write(&[
        "bash -c 'uptime; shutdown -r +5'",
        "sh -c \"sh -c 'rm x'\"",
        "bash -c \"$X\"",
        "timeout 5 rm x",
        "nice rm x",
        "nice -n 5 rm x",
        "ionice -c3 rm x",
        "stdbuf -oL rm x",
        "env rm x",
        "env X=1 ls",
        "env -u HOME ls",
        "time rm x",
        "xargs rm",
        "find . | xargs rm",
        "xargs -I{} sh -c 'rm {}'",
        "docker exec web rm /x",
        "docker exec web sh -c 'rm /x'",
        "docker exec -d web ls",
        "docker exec -e A=1 web ls",
        "kubectl exec pod -- rm /x",
        "kubectl exec -n a pod -c c -- sh -c 'rm x'",
        "pct exec 141 -- bash -c 'rm x'",
        "pct exec 141 -- rm x",
        "qm guest exec 203 -- rm x",
        "ssh host rm x",
        "ssh host 'uptime; rm x'",
        "ssh host uptime ';' reboot",
        "ssh host",
        "echo reboot | ssh pve2",
        "ssh -o ProxyCommand='sh -c \"rm x\"' host uptime",
        "ssh -oProxyCommand=x host uptime",
        "ssh -L 80:a:80 host uptime",
        "chroot /mnt ls",
        "nsenter -t 1 -m rm x",
        "ip netns exec ns1 rm x",
        "watch rm x",
        "find . -exec rm {} \\;",
        "find . -exec sh -c 'rm \"$1\"' _ {} \\;",
        "find . -execdir rm {} +",
        "find / -newer x -ok rm {} \\;",
        "bash -c 'bash -c \"bash -c \\\"rm x\\\"\"'",
    ]);
}

#[test]
fn dual_use_tools_with_dangerous_flags() {
    assert_write(&[
        "find . -fprintf /tmp/x '%p'",
        "find . -fls /tmp/x",
        "sed 's/x/y/w /etc/passwd' f",
        "sed -n '1e rm x' f",
        "sed -e '1r /etc/shadow' -e 'w out' f",
        "sed --in-place=.bak s/a/b/ f",
        "sed -ie s/a/b/ f",
        "sed -n 's/.*/id/ep' f",
        "tar -cf - x --checkpoint-action=exec=sh",
        "tar xf a.tar",
        "tar --to-command=sh -xf a.tar",
        "tar -I 'sh -c x' -tf a",
        "sort --compress-program=sh f",
        "sort -o /etc/passwd /etc/passwd",
        "sort --output=x f",
        "git -c core.pager='rm x' log",
        "git -c core.fsmonitor='rm x' status",
        "git grep -O'rm x' foo",
        "git log --output=/etc/x",
        "git diff --output x",
        "curl -XPOST http://a",
        "curl --request=DELETE http://a",
        "curl -d@f http://a",
        "curl -o /etc/x http://a",
        "curl -O http://a/x",
        "curl gopher://127.0.0.1:6379/_FLUSHALL",
        "curl dict://127.0.0.1:11211/",
        "curl -K cfg http://a",
        "curl -H 'X-HTTP-Method-Override: DELETE' http://a",
        "wget -O /etc/passwd http://a",
        "wget --post-data=x http://a",
        "wget http://a",
        "rsync -a x y",
        "dd if=/dev/zero of=/dev/sda",
        "date -s '2020-01-01'",
        "date 010100002020",
        "hostname evil",
        "sysctl -w a=b",
        "dmesg --clear",
        "journalctl --rotate",
        "journalctl --vacuum-time=1s",
        "crontab /tmp/evil",
        "crontab -r",
        "systemctl --now disable x",
        "systemctl -H host stop x",
        "tee /etc/motd",
        "cp /dev/null /etc/hosts",
        "truncate -s0 /var/log/syslog",
        "echo x >| /etc/x",
        "ls > /dev/null; rm x",
        "ls 2>/tmp/err",
        "ls &>/tmp/out",
        "openssl req -new -out x",
        "openssl genrsa -out k 2048",
        "smartctl -t long /dev/sda",
        "zfs destroy tank/x",
        "zpool scrub tank",
        "ip link set eth0 down",
        "ip -batch f",
        "ss -K dst 1.2.3.4",
        "kill -9 1",
        "iptables -F",
        "nft flush ruleset",
        "mount /dev/sdb1 /mnt",
        "docker compose up -d",
        "kubectl delete ns x",
        "pvesh set /nodes/a/lxc/1/config -memory 1",
        "ceph osd out 1",
        "apt-get install x",
        "dpkg -i x.deb",
    ]);
}

#[test]
fn sql_and_redis_content() {
    assert_write(&[
        "mysql -e \"SELECT 1; DROP TABLE t\"",
        "psql -c \"SELECT 1\" -c \"DROP TABLE t\"",
        "sqlite3 db \"SELECT 1\" \".shell rm x\"",
        "sqlite3 db \"select writefile('/tmp/x','y')\"",
        "psql -c \"COPY t TO PROGRAM 'rm x'\"",
        "psql -c '\\! rm x'",
        "psql -c '\\o /tmp/x'",
        "psql -c '\\copy t to /tmp/x'",
        "psql -f /tmp/x.sql",
        "mysql -e 'system rm x'",
        "mysql -e '\\! rm x'",
        "mysql -e 'SELECT * INTO OUTFILE \"/tmp/x\" FROM t'",
        "mysql -e '/*!50000 DROP TABLE t */ SELECT 1'",
        "mysql --init-command='DROP TABLE t' -e 'SELECT 1'",
        "psql -c 'SELECT my_cleanup()'",
        "psql -c 'WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d'",
        "psql -c 'SELECT * FROM t FOR UPDATE'",
        "sqlite3 db 'PRAGMA writable_schema=1'",
        "sqlite3 -init /tmp/x db 'SELECT 1'",
        "sqlite3 -cmd '.shell rm x' db 'SELECT 1'",
        "redis-cli EVAL \"return 1\" 0",
        "redis-cli -x SET k",
        "redis-cli CONFIG SET dir /etc",
        "redis-cli DEBUG SEGFAULT",
        "redis-cli --pipe",
        "redis-cli SHUTDOWN",
        "redis-cli config set dbfilename x",
    ]);
}

#[test]
fn odd_characters() {
    assert_write(&[
        "rm\u{00a0}x",
        "r\u{200b}m x",
        "ｒｍ x",
        "ls；rm x",
        "ls\u{0}rm",
        "\u{feff}rm x",
    ]);
}

#[test]
fn unbounded_forms_are_never_reads() {
    for cmd in [
        "tail -f x",
        "journalctl -f",
        "watch ls",
        "less f",
        "vim f",
        "mysql",
        "python3",
        "top",
        "ping h",
        "docker exec -it c sh",
        "ssh h",
        "sleep infinity",
        "yes",
    ] {
        let c = classify(cmd);
        assert!(!c.allowed_as_read(), "{cmd} accepted as read");
        assert!(!c.boundedness.is_bounded(), "{cmd} reported bounded");
    }
}

#[test]
fn suspicious_looking_reads_stay_reads() {
    for cmd in [
        "ls >/dev/null 2>&1",
        "grep -r \"rm -rf\" /etc/cron.d",
        "echo \"rm -rf /\"",
        "cat \"/tmp/file;rm x\"",
        "journalctl -u ssh --grep sudo",
        "docker exec web cat '/tmp/a;rm -rf /'",
        "ls -la # ; rm -rf /",
        "awk '{print ($1 > 5)}' f",
        "echo '$(rm x)'",
    ] {
        assert!(classify(cmd).allowed_as_read(), "{cmd} refused");
    }
}

fn assert_read(cases: &[&str]) {
    let refused: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            let v = classify(c);
            (!v.allowed_as_read()).then(|| format!("{c:?} → {:?} {:?}", v.intent, v.reasons))
        })
        .collect();
    assert!(
        refused.is_empty(),
        "refused as read:\n{}",
        refused.join("\n")
    );
}

#[test]
fn abbreviated_long_options_are_the_option() {
    assert_write(&[
        "sed --i s/a/b/ /etc/hosts",
        "sed --in-pl s/a/b/ /etc/hosts",
        "sort --ou=/etc/motd /etc/hosts",
        "sort --compress=sh /etc/hosts",
        "tar -tf a.tar --to-c=sh",
        "tar -tf a.tar --use=sh",
        "curl --out /tmp/x http://h/",
        "curl --conf /tmp/rc http://h/",
        "wget --spider --output-f=/tmp/log http://h/",
        "git log --outp=/tmp/x",
        "git ls-remote --upl=sh origin",
        "awk --exe=/tmp/p /etc/hosts",
        "rg --pr=sh x /etc",
        "ack --pag=sh x",
    ]);
    // An exact name wins over a longer option it prefixes; Go tools do not abbreviate.
    assert_read(&[
        "tar --list --file=/tmp/a.tar",
        "kubectl get pods --output=name",
    ]);
}

#[test]
fn builtins_that_set_variables_change_the_environment() {
    assert_write(&[
        "read PATH < /tmp/x; ls",
        "printf -v PATH /tmp; ls",
        "printf -vIFS x; ls",
        "command printf -v PATH /tmp",
        "mapfile -t a < /etc/hosts",
        "readarray a < /etc/hosts",
        "declare -x LD_PRELOAD=/tmp/x.so; ls",
        "typeset PATH=/tmp",
        "local PATH=/tmp",
        "let x=1",
        "getopts ab o",
        "export BASH_ENV=/tmp/x; bash -c ls",
        "readonly PATH",
        "wait -n -p pid",
    ]);
    assert_read(&["printf '%s\\n' hi", "wait"]);
}

#[test]
fn expansions_where_an_option_or_a_command_goes() {
    assert_write(&[
        "rg \"$X\" pattern",
        "rg x $DIR",
        "rg x /etc/$DIR",
        "sort \"$F\"",
        "awk '{print}' \"$F\"",
        "git log \"$REV\"",
        "curl \"$URL\"",
        "$X /etc/hosts",
        "/usr/bin/c?t /etc/hosts",
        "echo --pre=sh | xargs rg x",
        "echo 'a -o /tmp/x' | xargs sort",
        "xargs -a /tmp/l sort",
        "xargs -I{} sort {} < /tmp/l",
        "find /etc -exec sort -{} \\;",
        "[[ 'a[$(rm -f /tmp/x)]' -eq 0 ]]",
        // The value of $n is evaluated again as an expression (n='a[$(id)]' runs id).
        "[[ $n -ge 1 ]]",
    ]);
    assert_read(&[
        "rg x -- \"$DIR\"",
        "rg x \"/etc/$DIR\"",
        "sort /var/log/\"$F\"",
        "git log -- \"$P\"",
        "ls $HOME",
        "echo /etc/hosts | xargs sort",
        "docker ps -q | xargs docker inspect",
        "kubectl get pods -o name | xargs -n1 kubectl describe",
        "find /etc -name '*.conf' -exec sort {} +",
        "[[ 1 -ge 1 ]]",
    ]);
}

#[test]
fn brace_expansion_and_attached_values_in_option_words() {
    assert_write(&[
        "rg --{pre,x}=sh x /etc",
        "sort -{o,x}/tmp/f /etc/hosts",
        "sort --out{put,}=/tmp/f /etc/hosts",
        "sed -{i,n} s/a/b/ /etc/hosts",
        "curl --{output,x}=/tmp/x http://h/",
        "sort -uo/tmp/x /etc/hosts",
        "tar -tvIsh -f a.tar",
        "tar tvIsh -f a.tar",
        "curl -sSo/tmp/x http://h/",
        "wget -qo/tmp/log -O - http://h/",
        "sed -nf/tmp/x.sed /etc/hosts",
        "git -ccore.pager=sh log",
        "ssh -oProxyCommand=sh h uptime",
        "ssh -I/tmp/p.so h uptime",
    ]);
    assert_read(&["sort /etc/{hosts,passwd}", "curl -sD- http://h/"]);
}

#[test]
fn options_that_run_programs_write_files_or_load_configs() {
    assert_write(&[
        "rg --hostname-bin=/tmp/h x /etc",
        "man -P sh ls",
        "git -p log",
        "git ls-remote -u sh origin",
        "helm template x ./c --post-renderer sh",
        "docker --config /tmp/d ps",
        "docker -H ssh://x ps",
        "kubectl get pods --kubeconfig=/tmp/k",
        "wget --spider -o /tmp/log http://h/",
        "wget --spider -r http://h/",
        "wget --spider --config=/tmp/rc http://h/",
        "curl -w '%output{/tmp/x}' http://h/",
        "curl --ssl-sessions /tmp/s https://h/",
        "tree -o /tmp/x /etc",
        "hwinfo --log=/tmp/x",
        "lastlog --clear -u bob",
        "ntpq -c 'config x'",
        "mysql --pager=sh -e 'SELECT 1'",
    ]);
}

#[test]
fn older_rules_see_abbreviations_bundles_and_single_dash_long_options() {
    assert_write(&[
        "nmap --scr=vuln 192.168.1.10",
        "nmap -script=vuln 192.168.1.10",
        "nmap --oN /tmp/scan 192.168.1.10",
        "nmap -nA 192.168.1.10",
        "nfsstat -sz",
        "prlimit --pid 1234 --nof=1024",
        "prlimit -p 1234 -n1024",
        "yq -Pi '.a = 1' f.yaml",
        "yq --in '.a = 1' f.yaml",
        "visudo -c --exp=/tmp/policy.json",
        "udevadm info --clean",
        "iptables-save --modp=/tmp/x",
        "ifconfig eth0 -arp",
        "kill -09 1234",
        "mysqladmin --sl=5 status",
        "openssl x509 -in a.pem -out /dev/stdout -keyout /tmp/k",
        // ethtool compares its mode option in full and does not bundle: it refuses
        // `-ik` ("bad command line argument"), so the table does too.
        "ethtool -ik eth0",
    ]);
    assert_read(&[
        "nmap -sV -p 22 192.168.1.10",
        "hwclock -rv",
        "ethtool -i eth0",
        "visudo --ch",
        // visudo -c only parses the file it names (read-only, as the write oracle saw).
        "visudo -c --fi=/tmp/sudoers",
        "kill -0 1234",
    ]);
}

#[test]
fn the_shell_layer_denies_what_it_cannot_prove_inert() {
    // The review's live exploit, and the same payload wherever a nested shell string or a
    // wrapper carries it.
    let payload = "echo ${x:-`docker network create vigil-redteam-net`}";
    assert_write(&[
        payload,
        &format!("bash -c '{payload}'"),
        &format!("ssh host '{payload}'"),
        &format!("timeout 5 sh -c '{payload}'"),
        &format!("watch -n1 '{payload}'"),
        &format!("find /etc -name x -exec sh -c '{payload}' \\;"),
        &format!("docker exec c sh -c '{payload}'"),
        &format!("kubectl exec pod -- sh -c '{payload}'"),
        &format!("cat /etc/hosts | {payload}"),
        &format!("if true; then {payload}; fi"),
        &format!("{{ {payload}; }}"),
        &format!("( {payload} )"),
        &format!("! {payload}"),
        &format!("true && {payload}"),
    ]);
    // Quoting that hides the same text from the shell keeps the command a read.
    assert_read(&[
        "echo '${x:-`docker network create vigil-redteam-net`}'",
        "echo \"\\${x:-\\`id\\`}\"",
        "cat <<'EOF'\n${x:-`id`}\nEOF",
        "bash -c 'echo \"$HOME\"'",
    ]);
}

#[test]
fn sed_and_awk_refuse_what_their_parsers_do_not_follow() {
    assert_write(&[
        "sed '1a foo\\\\\n1e touch /tmp/x' /etc/hosts",
        "sed 's/x/[/;w /tmp/x\ns/]/x/' /etc/hosts",
        "sed -n 'b x w /tmp/x\n:x' /etc/hosts",
        "sed 's/[]/]/x/;w /tmp/x' /etc/hosts",
        "awk '{print /#/; system(\"id\")}' /etc/hosts",
        "awk '{print x++ / 2; system(\"id\"); y = 1/2}' /etc/hosts",
        "gawk -W exec /tmp/p.awk",
        "gawk -e 'BEGIN{}' -e 'BEGIN{system(\"id\")}'",
        "gawk -f a.awk -f b.awk /etc/hosts",
    ]);
    assert_read(&[
        "sed -n '/Events:/,$p' /tmp/f",
        "sed -e 's/#.*//' -e '/^$/d' /etc/ssh/sshd_config",
        "awk '$9 ~ /^5/' /var/log/nginx/access.log",
        "awk -F: '$3 >= 1000 {print $1}' /etc/passwd",
    ]);
}
