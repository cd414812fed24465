"""Compaction inside a real LangGraph agent loop (create_react_agent + pre_model_hook), with a scripted model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.prebuilt import create_react_agent
from pydantic import Field

from sparseread_mcp.compaction.elide import HEADER
from sparseread_mcp.compaction.langgraph import full_result_tool, pre_model_hook

FILES = {
    "src/table.py": "\n".join(
        [f"def helper_{n}(rows):\n    return [r * {n} for r in rows]  # plain helper {n}" for n in range(60)]
        + ["def pad(table):\n    padded_cols = max(len(r) for r in table)\n    return padded_cols"]
    ),
    "docs/notes.md": "\n".join(
        "This part of the notes says how tables are laid out, in plain words." for _ in range(60)
    ),
    "src/export.py": "\n".join(f"def export_{n}(rows):\n    return rows[{n}:]" for n in range(60)),
}


def view_file(path: str) -> str:
    """Show a file with line numbers."""
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(FILES[path].split("\n"), start=1))


def edit_file(path: str, old_str: str, new_str: str) -> str:
    """Replace old_str by new_str in a file."""
    FILES[path] = FILES[path].replace(old_str, new_str)
    return f"The file {path} has been edited."


class Scripted(BaseChatModel):
    """Answers from a script, one message per call, and records what it was sent."""

    script: list[AIMessage]
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Scripted:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.script[len(self.seen) - 1])])


def _call(name: str, number: int, **args: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{number}", "type": "tool_call"}])


NEW = "def pad(table, width=0):\n    padded_cols = max([width, *(len(r) for r in table)])\n    return padded_cols"


# LangGraph 1.x points to langchain.agents.create_agent; create_react_agent and its pre_model_hook stay until 2.0.
@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_a_react_agent_loop_sends_the_model_compacted_history_and_completes() -> None:
    model = Scripted(
        script=[
            _call("view_file", 1, path="src/table.py"),
            _call("view_file", 2, path="docs/notes.md"),
            _call("view_file", 3, path="src/export.py"),
            # uses `padded_cols`, seen three results ago, and writes a long new text of its own
            _call("edit_file", 4, path="src/table.py", old_str=FILES["src/table.py"].split("\n", 180)[-1], new_str=NEW),
            AIMessage(content="Done: pad() takes a width."),
        ]
    )
    agent = create_react_agent(model, [view_file, edit_file], pre_model_hook=pre_model_hook())
    state = agent.invoke({"messages": [("user", "Let pad() take a minimum width.")]})

    assert state["messages"][-1].content == "Done: pad() takes a width."
    assert len(model.seen) == 5
    # The state keeps every tool result whole; the model was sent old ones shortened.
    raw = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert all(not str(m.content).startswith(HEADER) for m in raw)
    sent = [m for m in model.seen[3] if isinstance(m, ToolMessage)]
    assert [str(m.content).startswith(HEADER) for m in sent] == [True, True, False]
    assert sum(len(str(m.content)) for m in sent) < 0.6 * sum(len(str(m.content)) for m in raw[:3])
    # What the next call uses is still in what the model was sent: the identifier from the first view, and
    # calls stay paired with their results.
    text = "\n".join(str(m.content) for m in model.seen[3])
    assert "padded_cols" in text
    assert [m.tool_call_id for m in sent] == ["call_1", "call_2", "call_3"]
    # The agent's own edit, sent back on the last call, is intact.
    last_edit = [m for m in model.seen[4] if isinstance(m, AIMessage) and m.tool_calls][-1]
    assert last_edit.tool_calls[0]["args"]["new_str"] == NEW


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_a_shortened_result_is_one_tool_call_away_from_its_full_text() -> None:
    archive: dict[str, str] = {}
    model = Scripted(
        script=[
            _call("view_file", 1, path="docs/notes.md"),
            _call("view_file", 2, path="src/export.py"),
            _call("full_result", 3, tool_call_id="call_1"),
            AIMessage(content="Read it again."),
        ]
    )
    tools = [view_file, full_result_tool(archive)]
    agent = create_react_agent(model, tools, pre_model_hook=pre_model_hook(archive=archive))
    state = agent.invoke({"messages": [("user", "What do the notes say?")]})
    assert state["messages"][-1].content == "Read it again."
    shortened = next(m for m in model.seen[2] if isinstance(m, ToolMessage) and m.tool_call_id == "call_1")
    assert str(shortened.content).startswith(HEADER) and f"{HEADER} call_1]" in str(shortened.content)
    given_back = next(m for m in state["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "call_3")
    assert given_back.content == view_file("docs/notes.md")
