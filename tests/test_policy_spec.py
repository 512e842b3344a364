"""The front hall's one policy spec and one factory (phonebuddy.policyspec): every backend from one spec,
the fast path as part of the spec, one default shared by the app and `phonebuddy run`, evaluation's
factory built on it, and a new backend reaching the command line by one registration."""

from __future__ import annotations

import json

import pytest

from assistant_core.policy.errors import PolicyUnavailable
from phonebuddy import policyspec
from phonebuddy.policyspec import (
    DEFAULT_FAST_PATH,
    PolicySpec,
    PolicySpecError,
    PolicyTarget,
    backend,
    build_policy,
)


def test_the_command_line_forms_parse_into_one_spec():
    assert PolicySpec.parse("remote:http://gpu:8000/v1", model="phonebuddy-4b") == PolicySpec(
        "remote", url="http://gpu:8000/v1", model="phonebuddy-4b")
    assert PolicySpec.parse("scripted:replies.txt").script == "replies.txt"
    assert PolicySpec.parse("phonebuddy").backend == "local"  # the older name of the local model
    with pytest.raises(PolicySpecError) as unknown:
        PolicySpec.parse("magic")
    assert "expected" in str(unknown.value) and "remote:URL" in str(unknown.value)
    assert "可选" in unknown.value.text.zh
    with pytest.raises(PolicySpecError, match="takes nothing"):
        PolicySpec.parse("noop:x")


def test_each_backend_is_built_from_the_spec(tmp_path):
    from assistant_core.policies import NoopPolicy, ScriptedPolicy
    from assistant_core.policy.local import LocalPolicy
    from assistant_core.policy.remote import RemotePolicy
    from harness.phoneworld.oracle import OraclePolicy
    from harness.phoneworld.tasks import make_world

    assert isinstance(build_policy(PolicySpec("noop")), NoopPolicy)
    script = tmp_path / "replies.txt"
    script.write_text('<tool_call>{"name": "finish", "arguments": {"message": "ok"}}</tool_call>\n')
    assert isinstance(build_policy(PolicySpec("scripted", script=str(script))), ScriptedPolicy)
    world, params = make_world("SettingsTurnOnWifi", 3, "en")
    oracle = build_policy(PolicySpec("oracle"), PolicyTarget(world=world, task_id="SettingsTurnOnWifi", seed=3,
                                                             params=params))
    assert isinstance(oracle, OraclePolicy)
    remote = build_policy(PolicySpec("remote", url="http://127.0.0.1:9/v1", model="autoglm-phone-9b",
                                     served_model="glm"), PolicyTarget(lang="zh"))
    assert isinstance(remote, RemotePolicy) and remote.profile.dialect == "autoglm"
    local = build_policy(PolicySpec("local", model="qwen3-vl-4b", model_dir=str(tmp_path), quantization="fp32"))
    assert isinstance(local, LocalPolicy) and local.model_dir == tmp_path and not local.loaded
    cpu = build_policy(PolicySpec("cpu", model_dir=str(tmp_path)))
    assert isinstance(cpu, LocalPolicy) and not cpu.loaded


def test_a_spec_that_cannot_run_says_why_in_both_languages():
    with pytest.raises(PolicySpecError) as oracle:
        build_policy(PolicySpec("oracle"))  # no simulated phone, no task
    assert "simulated phone" in oracle.value.text.en and "模拟手机" in oracle.value.text.zh
    with pytest.raises(PolicySpecError, match="server's address"):
        build_policy(PolicySpec("remote"))
    with pytest.raises(PolicySpecError, match="no such model profile"):
        build_policy(PolicySpec("local", model="phonebuddy-99b"))
    with pytest.raises(PolicyUnavailable, match="only run on a server"):  # the old factory's check, kept
        build_policy(PolicySpec("local", model="autoglm-phone-9b"))


def test_the_fast_path_is_part_of_the_spec():
    from assistant_core.policies import NoopPolicy
    from harness.fastpath import FastPathPolicy
    from harness.phoneworld import SimDevice, World

    device = SimDevice(World(seed=0, language="en"), screenshots=False)
    fronted = build_policy(PolicySpec("noop"), PolicyTarget(device=device))
    assert isinstance(fronted, FastPathPolicy) and isinstance(fronted.fallback, NoopPolicy)
    plain = build_policy(PolicySpec("noop", fast_path=False), PolicyTarget(device=device))
    assert isinstance(plain, NoopPolicy)


def test_the_app_and_the_command_line_share_one_default():
    from app.agent import AgentChoice, AgentKind, policy_spec
    from phonebuddy.run_cli import _parser

    args = _parser().parse_args(["x"])
    assert args.fast_path is DEFAULT_FAST_PATH is PolicySpec().fast_path is True
    assert args.policy == PolicySpec().backend
    for kind in AgentKind:
        assert policy_spec(AgentChoice(kind, server_address="http://h:1/v1")).fast_path is DEFAULT_FAST_PATH
    assert policy_spec(AgentChoice(AgentKind.LOCAL_CPU)).backend == "cpu"
    assert policy_spec(AgentChoice(AgentKind.LOCAL_4BIT)).quantization == "nf4"
    assert _parser().parse_args(["x", "--no-fast-path"]).fast_path is False


@pytest.fixture
def probe_backend():
    """A new backend, registered once, as a new module in assistant_core/policy would be."""
    built: list[PolicySpec] = []

    @backend("probe")
    def _probe(spec: PolicySpec, target: PolicyTarget):
        from assistant_core.policies import ScriptedPolicy

        built.append(spec)
        return ScriptedPolicy.from_replies(['<tool_call>{"name": "finish", "arguments": {"message": "probed"}}'
                                           '</tool_call>'])

    yield built
    del policyspec.BUILDERS["probe"]


def test_a_registered_backend_reaches_phonebuddy_run_and_evaluation(probe_backend, capsys):
    from harness.phoneworld.tasks import registry
    from phonebuddy import run_cli
    from training.config import EvalConfig
    from training.evaluate import Episode, evaluate, spec_policies

    code = run_cli.main(["what time is it on the moon", "--device", "sim", "--policy", "probe", "--no-history",
                         "--no-fast-path", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["policy"] == "probe" and out["outcome"] == "finished"
    assert [s.backend for s in probe_backend] == ["probe"] and probe_backend[0].fast_path is False
    report = evaluate([Episode(registry.get("SettingsTurnOnWifi"), 0)], spec_policies(PolicySpec("probe")),
                      policy_name="probe", screenshots=False)
    assert len(report.results) == 1 and len(probe_backend) == 2
    assert probe_backend[1].fast_path is False  # the fast path goes in front of the built policy, not inside it
    assert EvalConfig(policy="probe").policy == "probe"  # evaluation's config accepts every registered backend


def test_evaluation_builds_its_policies_through_the_spec():
    from training.cli import policy_spec
    from training.config import EvalConfig
    from training.errors import TrainingError

    spec = policy_spec(EvalConfig(policy="remote", endpoint="http://127.0.0.1:9/v1", model="glm",
                                  profile="autoglm-phone-9b", max_pixels=4096), fast_path=True)
    assert spec == PolicySpec("remote", url="http://127.0.0.1:9/v1", served_model="glm", model="autoglm-phone-9b",
                              max_pixels=4096, fast_path=True)
    with pytest.raises(TrainingError, match="--endpoint"):
        policy_spec(EvalConfig(policy="remote"))
