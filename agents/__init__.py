"""Agents: the protocol and the built-in policies."""

from agents.base import Agent, AgentOutput, BaseAgent
from agents.oracle import OracleAgent, OracleUnavailableError
from agents.random_agent import RandomAgent

__all__ = ["Agent", "AgentOutput", "BaseAgent", "OracleAgent", "OracleUnavailableError", "RandomAgent"]
