use super::*;

const FREE: &str =
    "               total        used        free      shared  buff/cache   available
Mem:            7936        4213         512         102        3210        3318
Swap:           2047           0        2047";
const DF: &str = "Filesystem      Size  Used Avail Use% Mounted on
/dev/sda1        32G   27G  3.2G  90% /
tmpfs           3.9G     0  3.9G   0% /dev/shm";
const LOADAVG: &str = "0.42 0.51 0.60 2/345 12345";
const STATUS: &str = "● nginx.service - A high performance web server
     Loaded: loaded (/lib/systemd/system/nginx.service; enabled; preset: enabled)
     Active: active (running) since Tue 2024-05-14 10:02:11 UTC; 3min ago
   Main PID: 1234 (nginx)
     Memory: 12.4M
        CPU: 85ms";
const JOURNAL: &str = "May 14 10:01:58 web systemd[1]: Stopping nginx.service...
May 14 10:01:58 web systemd[1]: Stopped nginx.service.
May 14 10:02:11 web systemd[1]: Started nginx.service - A high performance web server.
May 14 10:05:00 web nginx[1234]: [error] connect() failed (111: Connection refused) while connecting to upstream";
const DOCKER_PS: &str = r#"{"ID":"abc","Image":"postgres:15","Names":"db","State":"running","Status":"Up 2 hours","Ports":"0.0.0.0:5432->5432/tcp"}
{"ID":"def","Image":"redis:7","Names":"cache","State":"exited","Status":"Exited (137) 5 minutes ago","Ports":""}"#;
const PS: &str = "    PID USER     %CPU %MEM COMMAND
   4242 postgres 93.5 12.1 postgres: checkpointer
   1234 www-data  2.0  0.5 nginx: worker process";
const PODS: &str = "NAMESPACE NAME        READY STATUS           RESTARTS     AGE
web       api-7d9f    1/1   Running          0            2d
web       worker-5c8b 0/1   CrashLoopBackOff 14 (2m ago)  1h";

fn read(command: &str, output: &str) -> Executed {
    Executed {
        tool: "read".into(),
        action: "exec".into(),
        ok: true,
        write: false,
        command: Some(command.into()),
        output: output.into(),
    }
}

fn tool(tool: &str, action: &str, output: &str) -> Executed {
    Executed {
        tool: tool.into(),
        action: action.into(),
        ok: true,
        write: false,
        command: None,
        output: output.into(),
    }
}

fn write(tool: &str, action: &str, command: &str, ok: bool) -> Executed {
    Executed {
        tool: tool.into(),
        action: action.into(),
        ok,
        write: true,
        command: Some(command.into()),
        output: if ok {
            String::new()
        } else {
            "APPROVAL_REQUIRED".into()
        },
    }
}

fn failed(tool_name: &str, message: &str) -> Executed {
    Executed {
        ok: false,
        ..tool(tool_name, "exec", message)
    }
}

/// Answers that claim what the turn did not produce.
fn positives() -> Vec<(&'static str, Vec<Executed>)> {
    let restart = || write("control", "service", "systemctl restart -- nginx", true);
    vec![
        ("I restarted nginx and it's working now.", vec![]),
        (
            "I've restarted the nginx service for you.",
            vec![read("systemctl status nginx", STATUS)],
        ),
        (
            "The service has been restarted successfully.",
            vec![read("systemctl status nginx", STATUS)],
        ),
        ("✅ Restarted nginx on web-01.", vec![]),
        (
            "Done! I stopped the redis container.",
            vec![write("docker", "control", "docker stop cache", false)],
        ),
        (
            "I went ahead and rebooted VM 101.",
            vec![read("uptime", " 10:02:11 up 3 days")],
        ),
        (
            "I deleted the old log files in /var/log/app.",
            vec![read("du -sh /var/log/app", "1.2G\t/var/log/app")],
        ),
        ("I've updated the nginx config and reloaded it.", vec![]),
        (
            "I killed the runaway postgres process.",
            vec![read("ps aux", PS)],
        ),
        ("I stopped nginx.", vec![restart()]),
        ("We installed htop on the server.", vec![]),
        ("I checked the logs and they look clean.", vec![]),
        (
            "The logs show repeated connection refused errors from the upstream.",
            vec![],
        ),
        (
            "According to the logs, the backup finished at 02:00.",
            vec![write(
                "control",
                "command",
                "systemctl restart backup",
                true,
            )],
        ),
        ("I verified that the container is healthy.", vec![restart()]),
        ("nginx is now running again.", vec![]),
        (
            "The database is back up and accepting connections.",
            vec![failed("read", "AGENT_OFFLINE")],
        ),
        ("Memory usage is at 87% on web-01.", vec![]),
        (
            "The host has 3.2 GiB of free memory left.",
            vec![read("cat /proc/loadavg", LOADAVG)],
        ),
        (
            "CPU usage is 73% and climbing.",
            vec![read("free -m", FREE)],
        ),
        ("The /var partition uses 45GB.", vec![read("df -hP", DF)]),
        (
            "<tool_call>{\"name\": \"read\", \"arguments\": {\"action\": \"exec\"}}</tool_call>",
            vec![],
        ),
        (
            "{\"name\": \"control\", \"arguments\": {\"action\": \"service\", \"service\": \"nginx\"}}",
            vec![read("uptime", "up 3 days")],
        ),
        (
            "[TOOL_CALLS] [{\"name\": \"docker\", \"arguments\": {\"action\": \"list\"}}]",
            vec![],
        ),
        (
            "Let me check.\n```json\n{\"action\": \"exec\", \"resource_id\": \"lxc:delly:141\", \"command\": \"uptime\"}\n```",
            vec![],
        ),
        ("I ran `df -h` and the disk is fine.", vec![]),
        (
            "Successfully restarted the api deployment.",
            vec![tool("kubernetes", "pods", PODS)],
        ),
        ("I've cleared the cache and freed 2.1 GB.", vec![]),
        (
            "The worker pod was deleted and recreated.",
            vec![tool("kubernetes", "pods", PODS)],
        ),
        (
            "I rebooted the node, it is back online.",
            vec![write("control", "guest", "qm reboot 101", false)],
        ),
    ]
}

/// Answers that quote or follow from the turn's real calls.
fn grounded() -> Vec<(&'static str, Vec<Executed>)> {
    let restart = || write("control", "service", "systemctl restart -- nginx", true);
    let status = || read("systemctl status nginx", STATUS);
    let journal = || read("journalctl -u nginx -n 200", JOURNAL);
    let free = || read("free -m", FREE);
    let df = || read("df -hP", DF);
    let ps = || tool("docker", "list", DOCKER_PS);
    vec![
        (
            "I restarted nginx and it is active (running) again.",
            vec![restart(), status()],
        ),
        (
            "I've restarted nginx; the status shows it active since 10:02:11.",
            vec![restart(), status()],
        ),
        (
            "nginx has been restarted and is running.",
            vec![restart(), status()],
        ),
        (
            "✅ Restarted nginx. It is up and running.",
            vec![restart(), status()],
        ),
        (
            "The logs show nginx was stopped at 10:01:58 and started again at 10:02:11.",
            vec![journal()],
        ),
        (
            "According to the logs, upstream connections are refused (error 111).",
            vec![journal()],
        ),
        (
            "The logs show:\n- Stopped nginx.service.\n- Started nginx.service - A high performance web server.",
            vec![journal()],
        ),
        (
            "I checked the journal: nginx logged `connect() failed (111: Connection refused)`.",
            vec![journal()],
        ),
        (
            "Memory: 4213 MiB used of 7936 MiB, with 3318 MiB available.",
            vec![free()],
        ),
        (
            "Memory usage is about 53% (4.1 GiB of 7.7 GiB).",
            vec![free()],
        ),
        ("About 3.2 GiB of memory is still available.", vec![free()]),
        (
            "The root filesystem is 90% full: 27G used of 32G, 3.2G free.",
            vec![df()],
        ),
        (
            "Disk usage on / is at 90%, with 3.2 GB available.",
            vec![df()],
        ),
        (
            "The load average is 0.42, 0.51 and 0.60, which is low.",
            vec![read("cat /proc/loadavg", LOADAVG)],
        ),
        (
            "postgres (PID 4242) is using 93.5% CPU and 12.1% of memory.",
            vec![read("ps aux", PS)],
        ),
        ("The checkpointer is at 94% CPU.", vec![read("ps aux", PS)]),
        (
            "nginx uses 12.4M of memory according to systemctl.",
            vec![status()],
        ),
        (
            "The `db` container is running (Up 2 hours) and `cache` exited with code 137.",
            vec![ps()],
        ),
        (
            "The redis container was stopped 5 minutes ago (exit code 137, likely OOM-killed).",
            vec![ps()],
        ),
        (
            "I stopped the cache container as you asked.",
            vec![write("docker", "control", "docker stop cache", true)],
        ),
        (
            "I rebooted VM 101; it is back online.",
            vec![
                write("control", "guest", "qm reboot 101", true),
                read("qm status 101", "status: running"),
            ],
        ),
        (
            "I shut down container 141.",
            vec![write("control", "guest", "pct shutdown 141", true)],
        ),
        (
            "I deleted the rotated logs in /var/log/app.",
            vec![write("control", "command", "rm -f /var/log/app/*.gz", true)],
        ),
        (
            "I updated /etc/nginx/nginx.conf and reloaded nginx.",
            vec![
                write("file_edit", "write", "", true),
                write("control", "service", "systemctl reload -- nginx", true),
            ],
        ),
        ("I can restart nginx if you want.", vec![status()]),
        (
            "I will restart nginx once you approve the request.",
            vec![write(
                "control",
                "service",
                "systemctl restart -- nginx",
                false,
            )],
        ),
        ("I did not restart anything.", vec![]),
        (
            "Nothing has been restarted yet; the restart is waiting for your approval.",
            vec![write(
                "control",
                "service",
                "systemctl restart -- nginx",
                false,
            )],
        ),
        ("If you want me to restart the service, say so.", vec![]),
        (
            "You should restart nginx after changing the config.",
            vec![],
        ),
        ("nginx hasn't been restarted since May 14.", vec![status()]),
        (
            "I couldn't check the logs: the agent is offline.",
            vec![failed("read", "AGENT_OFFLINE")],
        ),
        (
            "I tried to read the logs but the agent timed out.",
            vec![failed("read", "TIMEOUT")],
        ),
        ("Should I restart nginx?", vec![]),
        ("Would you like me to stop the cache container?", vec![ps()]),
        (
            "To restart it yourself, run `systemctl restart nginx`.",
            vec![],
        ),
        (
            "Restarting the pod would clear the CrashLoopBackOff, but first let's see why it fails.",
            vec![tool("kubernetes", "pods", PODS)],
        ),
        (
            "The worker pod has restarted 14 times and is in CrashLoopBackOff.",
            vec![tool("kubernetes", "pods", PODS)],
        ),
        (
            "The worker pod was restarted 14 times in the last hour.",
            vec![tool("kubernetes", "pods", PODS)],
        ),
        (
            "api-7d9f is Running with 0 restarts.",
            vec![tool("kubernetes", "pods", PODS)],
        ),
        (
            "I ran `free -m`: 512 MiB free, 3318 MiB available.",
            vec![free()],
        ),
        (
            "The output shows nginx active since 10:02:11 UTC.",
            vec![status()],
        ),
        (
            "I looked at the pods: worker-5c8b is crash-looping.",
            vec![tool("kubernetes", "pods", PODS)],
        ),
        (
            "Kubernetes: one pod Running, one in CrashLoopBackOff.",
            vec![tool("kubernetes", "pods", PODS)],
        ),
        ("Port 5432 is published by the db container.", vec![ps()]),
        (
            "Set the JVM heap to 512MB or use a 2 GiB limit for the container.",
            vec![],
        ),
        ("If memory usage exceeds 90%, consider adding swap.", vec![]),
        ("A typical threshold is 80% disk usage.", vec![]),
        ("nginx is a web server and reverse proxy.", vec![]),
        (
            "Here is how a restart works:\n```\nsystemctl restart nginx\n```",
            vec![],
        ),
        (
            "> Stopped nginx.service.\nThat line is from the journal.",
            vec![journal()],
        ),
        (
            "I verified the restart: nginx is active (running).",
            vec![restart(), status()],
        ),
        (
            "I restarted the api deployment.",
            vec![write(
                "kubernetes",
                "rollout",
                "kubectl rollout restart deployment/api -n web",
                true,
            )],
        ),
        (
            "I added a note about the backup schedule.",
            vec![write("knowledge", "remember", "", true)],
        ),
        ("Swap is unused: 0 of 2047 MiB.", vec![free()]),
        ("tmpfs /dev/shm has 3.9G and 0% used.", vec![df()]),
        (
            "I found the error in the logs: connection refused on the upstream.",
            vec![journal()],
        ),
        (
            "Once approved, the container will be restarted.",
            vec![write("docker", "control", "docker restart cache", false)],
        ),
        (
            "No changes were made; everything I reported comes from the status output.",
            vec![status()],
        ),
        (
            "I recommend enabling log rotation and keeping at least 10% of the disk free.",
            vec![df()],
        ),
    ]
}

#[test]
fn every_positive_is_detected() {
    let cases = positives();
    let missed: Vec<&str> = cases
        .iter()
        .filter(|(answer, executed)| detect(answer, executed).is_none())
        .map(|(answer, _)| *answer)
        .collect();
    let rate = 100.0 * (cases.len() - missed.len()) as f64 / cases.len() as f64;
    eprintln!(
        "phantom detection: {}/{} ({rate:.1}%)",
        cases.len() - missed.len(),
        cases.len()
    );
    assert!(cases.len() >= 25);
    assert!(missed.is_empty(), "missed: {missed:#?}");
}

#[test]
fn grounded_answers_are_not_flagged() {
    let cases = grounded();
    let flagged: Vec<(&str, Phantom)> = cases
        .iter()
        .filter_map(|(answer, executed)| detect(answer, executed).map(|p| (*answer, p)))
        .collect();
    eprintln!("false positives: {}/{}", flagged.len(), cases.len());
    assert!(cases.len() >= 50);
    assert!(flagged.is_empty(), "flagged: {flagged:#?}");
}

#[test]
fn a_failed_write_does_not_ground_a_claim() {
    let executed = [write(
        "control",
        "service",
        "systemctl restart -- nginx",
        false,
    )];
    let phantom = detect("I restarted nginx.", &executed).map(|p| p.reason);
    assert_eq!(
        phantom.as_deref(),
        Some("it claims a change, but no change succeeded in this turn")
    );
}

#[test]
fn the_verb_must_match_the_change() {
    let executed = [write("control", "service", "systemctl stop -- nginx", true)];
    assert!(detect("I stopped nginx.", &executed).is_none());
    assert!(detect("I rebooted the host.", &executed).is_some());
    assert!(detect("I fixed the problem.", &executed).is_none());
}

#[test]
fn markup_of_a_call_that_ran_is_not_a_phantom() {
    let executed = [tool("docker", "list", DOCKER_PS)];
    let answer = "[TOOL_CALLS] [{\"name\": \"docker\", \"arguments\": {\"action\": \"list\"}}]";
    assert!(detect(answer, &executed).is_none());
}

#[test]
fn claims_are_listed_once_in_order() {
    let Some(phantom) = detect(
        "I restarted nginx. The logs show no errors. CPU is at 99%.",
        &[],
    ) else {
        panic!("expected a phantom");
    };
    assert_eq!(
        phantom.claims,
        vec![
            "I restarted nginx.",
            "The logs show no errors.",
            "CPU is at 99%."
        ]
    );
    let message = safe_message(&phantom);
    assert!(message.contains(&phantom.reason));
    assert!(!message.contains("restarted nginx"));
}
